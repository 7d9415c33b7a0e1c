"""Soak: many model x device jobs on two simulated adb devices, with every fault the simulator can
inject and `kill -9` of the runner at random instants, each followed by a resume.

    .venv/bin/python bench/soak.py [--jobs 1000] [--kills 10] [--seed 1] [--quick] [--keep DIR]

The simulators (`nnlite_tui.simdevice`, speaking the adb protocol to a private real adb server)
run in this process; the runner is the real `nnlite run ... --headless` in a subprocess. Jobs are
copies of one tiny LEMUR-format model under distinct names (one real conversion, the rest from the
cache), benchmarked with short settings on both devices. A seeded plan picks which jobs get which
fault: when a planned job's benchmark starts (its StageStarted in RUN_DIR/events.jsonl), the fault
is armed on that job's device. Kills happen at seeded progress points plus a seeded delay; after
each, the same command is run again. The run ends when a rerun exits 0.

Prints jobs, faults injected by kind, recoveries by escalation step, final job states, lost jobs
(no terminal state), duplicate reports (two report files for one job, or the report of a job that
was already terminal rewritten by a later run) and wall time; exits 1 unless every job is terminal,
none is lost or duplicated, every fault kind hit at least --min-fault-share of the jobs and every
planned kill happened.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

KINDS = ("disconnect", "offline", "reboot", "app_crash", "truncated_report", "hung_shell", "install_fail")
INSTALL_CODE = "INSTALL_FAILED_INSUFFICIENT_STORAGE"
PACKAGE = "org.nnlite.bench"
TERMINAL = ("done", "failed", "skipped")
# Deadlines for the runner's adb calls: a hung `am start` must cost seconds, not the CLI's minutes.
ADB_TIMEOUTS = "shell_s=10,launch_s=2.5,install_s=30,report_s=20,poll_s=0.05,logcat_every_s=0.4"
MODEL = '''import torch.nn as nn


def supported_hyperparameters():
    return {"lr", "momentum"}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        return self.fc(self.conv(x).relu().mean((2, 3)))
'''


def make_plan(seed: int, jobs: list[tuple[str, int]], share: float, kills: int) -> tuple[dict, list[float]]:
    """Which job gets which fault, and the progress fractions at which the runner is killed."""
    rng = random.Random(seed)
    per_kind = math.ceil(share * len(jobs))
    order = list(range(len(jobs)))
    rng.shuffle(order)
    plan = {jobs[i]: KINDS[n // per_kind] for n, i in enumerate(order[:per_kind * len(KINDS)])}
    points = sorted(rng.uniform(0.02, 0.92) for _ in range(kills))
    return plan, points


class EventTail:
    """New lines of RUN_DIR/events.jsonl as dicts; a line cut by kill -9 is dropped at the kill."""

    def __init__(self, path: Path):
        self.path, self.offset, self.buf, self.cut = path, 0, b"", 0

    def read(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        *lines, self.buf = (self.buf + data).split(b"\n")
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                self.cut += 1
        return out

    def drop_partial(self) -> None:
        if self.buf:
            self.cut += 1
            self.buf = b""


class Injector:
    """Arms the planned fault on a job's device when the job's benchmark starts; disarms one-shots."""

    def __init__(self, sims: dict, plan: dict, rng: random.Random):
        self.sims, self.plan, self.rng = sims, plan, rng
        self.injected: dict[tuple[str, str], str] = {}
        self.timers: list[threading.Timer] = []
        self.pending: list[tuple[float, str, str]] = []  # (give-up time, serial, what to disarm)

    def on_start(self, model: str, serial: str) -> None:
        kind = self.plan.get((model, list(self.sims).index(serial)))
        if kind is None or (model, serial) in self.injected:
            return
        self.injected[(model, serial)] = kind
        sim = self.sims[serial]
        now = time.monotonic()
        if kind in ("disconnect", "offline", "reboot"):  # at a random point of the job's adb traffic
            act = {"disconnect": lambda: sim.drop(0.6), "offline": lambda: sim.go_offline(1.0),
                   "reboot": sim.reboot}[kind]
            timer = threading.Timer(self.rng.uniform(0.0, 0.8), _quietly, args=(act,))
            timer.daemon = True
            timer.start()
            self.timers.append(timer)
        elif kind == "app_crash":
            sim.crash_app(1)
        elif kind == "truncated_report":
            sim.truncate_reports(1)
        elif kind == "hung_shell":
            sim.hang_shell("am start")
            self.pending.append((now + 30, serial, "hang"))
        elif kind == "install_fail":  # the app is gone and cannot be installed again, for a while
            sim.call(sim.pm.uninstall, PACKAGE)
            sim.fail_installs(INSTALL_CODE)
            self.pending.append((now + 40, serial, "install"))

    def on_event(self, ev: dict) -> None:
        text = json.dumps(ev)
        if INSTALL_CODE not in text:
            return
        for item in list(self.pending):  # the failed install was seen: installs work again
            if item[2] == "install" and item[1] in text and _quietly(self.sims[item[1]].fail_installs, None):
                self.pending.remove(item)

    def tick(self) -> None:
        now = time.monotonic()
        keep = []
        for until, serial, what in self.pending:
            sim = self.sims[serial]
            if what == "hang" and (sim.faults.hung > 0 or now > until):  # one command hangs, then no more
                _quietly(sim.call, sim.faults.hang_prefixes.clear)
            elif what == "install" and now > until:
                _quietly(sim.fail_installs, None)
            else:
                keep.append((until, serial, what))
        self.pending = keep

    def reset(self) -> None:
        """At a kill: nothing armed for the dead runner's job may hit the next run by surprise."""
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()
        self.pending.clear()
        for sim in self.sims.values():
            _quietly(sim.clear_faults)


def _quietly(fn, *args) -> bool:
    try:
        fn(*args)
    except (RuntimeError, TimeoutError) as exc:  # a simulator call during its own reboot: the next tick retries
        print(f"soak: fault call {getattr(fn, '__name__', fn)} failed: {exc}", file=sys.stderr)
        return False
    return True


def report_identities(run_dir: Path) -> dict[tuple[str, str], list[tuple]]:
    """(model, device serial) -> [(file, created_at, launch id)] over every report file."""
    out: dict[tuple[str, str], list[tuple]] = {}
    for path in sorted((run_dir / "reports").glob("*.json")):
        try:
            rep = json.loads(path.read_text())
        except (OSError, ValueError):
            out.setdefault(("?", path.name), []).append((path.name, None, "unreadable"))
            continue
        key = (rep.get("model_name"), (rep.get("device") or {}).get("serial"))
        out.setdefault(key, []).append((path.name, rep.get("created_at"), (rep.get("benchmark") or {}).get("launch_id")))
    return out


def job_states(run_dir: Path, models: list[str], serials: list[str]) -> dict[tuple[str, str], str | None]:
    from nnlite_tui.core.store import load_snapshot

    _, records = load_snapshot(run_dir)
    by_name = {r["name"]: r for r in records}
    states = {}
    for name in models:
        rec = by_name.get(name) or {}
        per = rec.get("devices") or {}
        for serial in serials:
            entry = per.get(serial)
            if entry is not None:
                states[(name, serial)] = entry.get("status")
            elif rec.get("status") in TERMINAL and rec.get("conversion") and not rec["conversion"].get("ok"):
                states[(name, serial)] = rec["status"]  # failed before any device: terminal for all
            else:
                states[(name, serial)] = rec.get("status")
    return states


class Checker:
    """Remembers each terminal job's report at every stop of the runner; a later change is a rewrite."""

    def __init__(self, run_dir: Path, models: list[str], serials: list[str]):
        self.run_dir, self.models, self.serials = run_dir, models, serials
        self.frozen: dict[tuple[str, str], tuple] = {}
        self.rewritten: set[tuple[str, str]] = set()

    def checkpoint(self) -> None:
        from nnlite_tui.core.store import StoreError

        try:
            states = job_states(self.run_dir, self.models, self.serials)
        except StoreError:  # the runner died before it made its store: nothing is terminal yet
            return
        reports = report_identities(self.run_dir)
        for job, state in states.items():
            current = tuple(reports.get(job, []))
            if job in self.frozen and current != self.frozen[job]:
                self.rewritten.add(job)
            if state in TERMINAL and job not in self.frozen:
                self.frozen[job] = current


def orphans_of(pgid: int) -> list[int]:
    import psutil

    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(proc.pid) == pgid:
                found.append(proc.pid)
        except (ProcessLookupError, PermissionError):
            continue
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1000, help="model x device jobs (two devices: jobs/2 models)")
    ap.add_argument("--kills", type=int, default=10, help="kill -9 of the runner, each followed by a resume")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="smoke check: 100 jobs, 2 kills")
    ap.add_argument("--fault-share", type=float, default=0.06, help="share of jobs planned per fault kind")
    ap.add_argument("--min-fault-share", type=float, default=0.05, help="pass only if every kind hit this share")
    ap.add_argument("--max-minutes", type=float, default=15.0, help="give up (and fail) after this long")
    ap.add_argument("--keep", help="run in this directory and keep it (default: a temp dir, removed)")
    args = ap.parse_args()
    if args.quick:
        args.jobs, args.kills = 100, 2
    n_models = max(1, args.jobs // 2)
    started, load_start = time.monotonic(), os.getloadavg()[0]
    deadline = started + args.max_minutes * 60

    from nnlite_tui.simdevice import BootTimings, SimConfig, SimDevice
    from nnlite_tui.simdevice.apk import build_test_apk
    from nnlite_tui.simdevice.adb_server import ADB_ENV, start_adb_server

    work = Path(args.keep or tempfile.mkdtemp(prefix="nnlite-soak-"))
    models_dir, run_dir = work / "models", work / "run"
    models_dir.mkdir(parents=True, exist_ok=True)
    models = [f"soak_{i:04d}" for i in range(n_models)]
    for name in models:
        (models_dir / f"{name}.py").write_text(MODEL)
    server = start_adb_server()
    env = {**os.environ, **ADB_ENV, "ANDROID_ADB_SERVER_PORT": str(server.port), "ADBUTILS_ADB_PATH": server.adb,
           "NNLITE_APK": build_test_apk(str(work / "bench.apk")), "NNLITE_ADB_TIMEOUTS": ADB_TIMEOUTS,
           "NNLITE_CACHE_DIR": str(work / "cache"), "LITERT_TORCH_SHOW_PROGRESS": "n"}
    boot = BootTimings(absent=0.2, offline=0.3, booting=0.5, pm_delay=0.3)
    sims = {}
    for profile in ("emu-arm64", "emu-x86_64"):
        sim = SimDevice(SimConfig(adb_server_port=server.port, profile=profile, boot=boot, app_start_delay=0.05)).start()
        server.wait_state(sim.serial, "device", timeout=60)
        sims[sim.serial] = sim
    serials = list(sims)
    jobs = [(m, d) for m in models for d in range(len(serials))]
    plan, points = make_plan(args.seed, jobs, args.fault_share, args.kills)
    rng = random.Random(args.seed + 1)
    injector = Injector(sims, plan, rng)
    tail = EventTail(run_dir / "events.jsonl")
    checker = Checker(run_dir, models, serials)
    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(models_dir), "--out", str(run_dir), "--headless",
           *[x for s in serials for x in ("--device", s)], "--in-shape", "1,3,16,16", "--runs", "3", "--warmup", "1",
           "--min-seconds", "0", "--max-seconds", "5", "--cooldown", "0.2", "--workers", "1", "--max-attempts", "3"]
    recoveries: Counter = Counter()
    status: dict[str, str] = {}
    attempts: Counter = Counter()
    exits, kills, orphans, timed_out = [], 0, 0, False
    log = open(work / "runner.log", "ab")
    try:
        while True:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            kill_at = None
            while True:
                for ev in tail.read():
                    kind = ev.get("type")
                    if kind == "ModelStatus":
                        status[ev["model"]] = ev["status"]
                    elif kind == "StageStarted" and ev.get("stage") == "benchmark" and ev.get("device") in sims:
                        attempts[(ev["model"], ev["device"])] += 1
                        injector.on_start(ev["model"], ev["device"])
                    elif kind == "Recovery":
                        recoveries[ev["action"]] += 1
                    injector.on_event(ev)
                injector.tick()
                if proc.poll() is not None:
                    break
                now = time.monotonic()
                done = sum(s in TERMINAL for s in status.values()) / n_models
                if kill_at is None and kills < len(points) and done >= points[kills]:
                    kill_at = now + rng.uniform(0.0, 1.5)
                if (kill_at is not None and now >= kill_at) or now > deadline:
                    timed_out = now > deadline
                    os.kill(proc.pid, signal.SIGKILL)  # the runner alone, as `kill -9 PID` would
                    proc.wait()
                    kills += not timed_out
                    time.sleep(1.0)  # what its children do once their parent is gone
                    left = orphans_of(proc.pid)
                    orphans += len(left)
                    for pid in left:
                        os.kill(pid, signal.SIGKILL)
                    break
                time.sleep(0.05)
            exits.append(proc.returncode)
            tail.drop_partial()
            injector.reset()
            checker.checkpoint()
            if timed_out or (proc.returncode == 0 and kills >= len(points)):
                break
            if len(exits) > len(points) + 6:
                print("soak: the runner keeps stopping without finishing; giving up", file=sys.stderr)
                break
    finally:
        log.close()
        for sim in sims.values():
            sim.stop()
        server.kill()
    wall = time.monotonic() - started

    states = job_states(run_dir, models, serials)
    reports = report_identities(run_dir)
    final = Counter(states.values())
    lost = [j for j, s in states.items() if s not in TERMINAL]
    two_files = [j for j, files in reports.items() if len(files) > 1]
    no_report = [j for j, s in states.items() if s in ("done", "failed") and j not in reports]
    hit = Counter(injector.injected.values())
    n_jobs = len(jobs)
    print(f"soak: seed {args.seed}, {n_models} models x {len(serials)} devices ({', '.join(serials)}), "
          f"work dir {work}")
    print(f"jobs: {n_jobs}; benchmark attempts started: {sum(attempts.values())}")
    print("faults injected by kind (jobs, share of jobs):")
    for kind in KINDS:
        print(f"  {kind:17s} {hit[kind]:5d}  {100 * hit[kind] / n_jobs:5.1f}%")
    print(f"kill -9 of the runner: {kills} (planned {len(points)}), each followed by a resume; "
          f"runner exits {exits}; processes left behind by a killed runner: {orphans}")
    from nnlite_tui.core.run.recovery import LEVELS as LADDER  # the runner's escalation for device faults

    print("recoveries by escalation step (Recovery events in events.jsonl):")
    for action in LADDER:
        print(f"  {action:22s} {recoveries[action]:5d}")
    print("  other recovery events: " + ", ".join(f"{a} {n}" for a, n in sorted(recoveries.items(), key=lambda kv: -kv[1])
                                                if a not in LADDER))
    print("final job states: " + ", ".join(f"{k}: {v}" for k, v in sorted(final.items(), key=str)))
    print(f"lost jobs (no terminal state): {len(lost)}{' e.g. ' + str(lost[:3]) if lost else ''}")
    print(f"duplicate reports: {len(two_files) + len(checker.rewritten)} ({len(two_files)} jobs with two report "
          f"files, {len(checker.rewritten)} terminal jobs whose report a later run rewrote"
          f"{': e.g. ' + str(sorted(checker.rewritten)[:3]) if checker.rewritten else ''})")
    print(f"terminal jobs without a report: {len(no_report)}; event lines cut by kill -9: {tail.cut}")
    print(f"wall time: {wall:.0f} s ({wall / 60:.1f} min); machine load average (1 min) at start "
          f"{load_start:.1f}, at end {os.getloadavg()[0]:.1f}")
    problems = []
    if timed_out:
        problems.append(f"did not finish within {args.max_minutes:g} min")
    if lost:
        problems.append(f"{len(lost)} lost jobs")
    if two_files or checker.rewritten:
        problems.append("duplicate reports")
    if no_report:
        problems.append(f"{len(no_report)} terminal jobs without a report")
    if kills < len(points):
        problems.append(f"only {kills} of {len(points)} kills happened")
    short = [k for k in KINDS if hit[k] < args.min_fault_share * n_jobs]
    if short:
        problems.append(f"fault kinds under {100 * args.min_fault_share:g}% of jobs: {', '.join(short)}")
    print("PASS" if not problems else "FAIL: " + "; ".join(problems))
    if not args.keep and not problems:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
