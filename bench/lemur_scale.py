"""A day-long run over a seeded slice of the whole LEMUR corpus, sampled at intervals: does it stay flat?

    .venv/bin/python bench/lemur_scale.py [--sample 1000] [--seed 0] [--every 60] [--keep DIR]
        [--wheel-dir DIR] [--run-args "..."] [--console-repeats 3]

1. `nnlite lemur fetch WORK/lemur --sample N --seed S` (nn-dataset from PyPI; --wheel-dir keeps the
   downloaded wheel, so a rerun unpacks it instead of downloading 100 MB again);
2. `nnlite run WORK/lemur --headless --out WORK/run --cache-dir WORK/cache` with the default settings
   (plus --run-args) as a subprocess, its output in WORK/run.log;
3. every --every seconds one line: elapsed, units done/failed of the total (the run's store, read as
   `nnlite status` reads it), models/hour (cumulative and over the last interval), RSS of the
   orchestrator and the summed RSS of its descendants (the conversion workers; pages they share count
   in each), disk used by the run folder and by the cache (each alone, as `du` on it: an artifact the run
   links from the cache while it is benchmarked counts in both), bytes of the store (state.json and its
   journals) and of events.jsonl, load average. The same figures go to WORK/samples.csv as they are
   taken (--csv elsewhere);
4. at the end: wall, models/hour, the valid share overall, by family and by task, the failure causes
   (top 15), how long `nnlite status RUN` and the console take to open (median of 3), and for each figure
   that should stay flat its growth per 1,000 models (least squares over the samples), and a projected
   wall time for the whole release.

Without --keep, WORK is a temporary folder removed at the end (samples.csv with it: give --csv).
Ctrl-C stops the run (as its own Ctrl-C would) and prints the figures over what was measured.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, fields
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402

from bench.scale_trends import Trend, fit, intervals, project  # noqa: E402
from nnlite_tui.core.events import TERMINAL  # noqa: E402
from nnlite_tui.core.run_dir import EVENTS_FILE  # noqa: E402
from nnlite_tui.core.sources.lemur_fetch import DEFAULT_VERSION, MANIFEST, download_wheel  # noqa: E402
from nnlite_tui.core.sources.units import parse_unit  # noqa: E402
from nnlite_tui.core.store.files import StoreError, journals, load_snapshot, state_path  # noqa: E402

MB = 2**20
TOP_CAUSES = 15
FAMILY_LINES = 30  # families shown (most units first); every family is in WORK/families.csv


@dataclass(frozen=True)
class Sample:
    elapsed_s: float
    running: bool  # the run's process was alive (its RSS figures are zero after it ended)
    units: int  # units in the store
    done: int
    failed: int
    skipped: int
    models_finished: int  # models whose every unit is terminal
    orchestrator_rss: int
    workers_rss: int  # summed over the orchestrator's descendants
    workers: int
    run_disk: int
    cache_disk: int
    store_bytes: int  # state.json and its journals
    record_bytes: float | None  # mean JSON bytes of the store records of units finished since the last sample
    events_bytes: int
    load1: float

    @property
    def terminal(self) -> int:
        return self.done + self.failed + self.skipped


@dataclass(frozen=True)
class Progress:
    units: int
    counts: Counter
    models_finished: int
    terminal_bytes: dict[str, int]  # unit -> its record's JSON bytes, for every terminal unit


def progress(run: Path) -> Progress | None:
    """The run's store as `nnlite status` reads it (no lock, no write); None before the first write."""
    if not state_path(run).exists():
        return None
    _, records = load_snapshot(run)
    counts: Counter = Counter(rec.get("status", "queued") for rec in records)
    open_models: set[str] = set()
    models: set[str] = set()
    terminal_bytes: dict[str, int] = {}
    for rec in records:
        model = parse_unit(rec["name"])[0]
        models.add(model)
        if rec.get("status") in TERMINAL:
            terminal_bytes[rec["name"]] = len(json.dumps(rec))
        else:
            open_models.add(model)
    return Progress(len(records), counts, len(models - open_models), terminal_bytes)


def disk_used(root: Path) -> int:
    """Bytes allocated under `root` (as du counts them); files that vanish while walking are skipped."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def store_bytes(run: Path) -> int:
    state = state_path(run)
    return size_of(state) + sum(size_of(p) for _, p in journals(state))


def tree_rss(proc: psutil.Process) -> tuple[int, int, int]:
    """(the process's RSS, its descendants' summed RSS, how many descendants)."""
    try:
        own = proc.memory_info().rss
        children = proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0, 0
    total = alive = 0
    for child in children:
        try:
            total += child.memory_info().rss
            alive += 1
        except psutil.NoSuchProcess:
            continue
    return own, total, alive


class Sampler:
    """Takes the samples of one run; remembers which units were already terminal, so each sample's
    record size is of the units finished since the one before."""

    def __init__(self, proc: psutil.Process, run: Path, cache: Path) -> None:
        self.proc, self.run, self.cache = proc, run, cache
        self.samples: list[Sample] = []
        self.seen: set[str] = set()

    def take(self, elapsed: float, running: bool) -> Sample:
        try:
            state = progress(self.run)
        except StoreError as exc:  # a reader racing a compaction gives up after 50 tries: keep the last counts
            print(f"  (store not readable this time: {exc})", flush=True)
            state = None
        last = self.samples[-1] if self.samples else None
        own, workers, n_workers = tree_rss(self.proc) if running else (0, 0, 0)
        new = {name: n for name, n in state.terminal_bytes.items() if name not in self.seen} if state else {}
        self.seen.update(new)
        counts = state.counts if state else Counter()
        sample = Sample(
            elapsed_s=elapsed, running=running, units=state.units if state else (last.units if last else 0),
            done=counts["done"] if state else (last.done if last else 0),
            failed=counts["failed"] if state else (last.failed if last else 0),
            skipped=counts["skipped"] if state else (last.skipped if last else 0),
            models_finished=state.models_finished if state else (last.models_finished if last else 0),
            orchestrator_rss=own, workers_rss=workers, workers=n_workers, run_disk=disk_used(self.run),
            cache_disk=disk_used(self.cache), store_bytes=store_bytes(self.run),
            record_bytes=sum(new.values()) / len(new) if new else None,
            events_bytes=size_of(self.run / EVENTS_FILE), load1=os.getloadavg()[0])
        self.samples.append(sample)
        return sample


HEADER = (f"{'elapsed':>8} {'done':>5} {'fail':>5} {'of':>5} {'mod/h':>6} {'last':>6} {'orchRSS':>8} "
          f"{'wrkRSS':>8} {'wrk':>3} {'run':>7} {'cache':>7} {'store':>7} {'rec':>6} {'events':>7} {'load':>5}")


def sample_line(s: Sample, prev: Sample | None) -> str:
    hours = s.elapsed_s / 3600
    rate = s.models_finished / hours if hours else 0.0
    last = ((s.models_finished - prev.models_finished) / (s.elapsed_s - prev.elapsed_s) * 3600
            if prev and s.elapsed_s > prev.elapsed_s else rate)
    return (f"{clock(s.elapsed_s):>8} {s.done:>5} {s.failed:>5} {s.units:>5} {rate:>6.1f} {last:>6.1f} "
            + (f"{size(s.orchestrator_rss):>8} {size(s.workers_rss):>8} {s.workers:>3} " if s.running
               else f"{'ended':>8} {'-':>8} {'-':>3} ")
            + f"{size(s.run_disk):>7} {size(s.cache_disk):>7} {size(s.store_bytes):>7} "
            f"{size(s.record_bytes) if s.record_bytes is not None else '-':>6} "
            f"{size(s.events_bytes):>7} {s.load1:>5.2f}")


def size(n: float) -> str:
    """Bytes as K, M or G (binary), three significant figures or so."""
    for unit, scale in (("G", 2**30), ("M", MB), ("K", 1024)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return f"{n:.0f}B"


def clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


# ----- fetching -----
def fetch_tree(args, tree: Path) -> dict:
    """The slice as `nnlite lemur fetch` makes it; a tree already fetched with the same draw is reused."""
    manifest = tree / MANIFEST
    if manifest.exists():
        known = json.loads(manifest.read_text())
        if (known.get("sample"), known.get("seed"), known.get("version")) == (args.sample, args.seed, args.version):
            print(f"fetch: reusing {tree} ({known['models']} models, seed {args.seed})", flush=True)
            return known
        sys.exit(f"{tree} holds another draw ({known.get('sample')} models, seed {known.get('seed')}): "
                 f"use another --keep folder")
    cmd = [sys.executable, "-m", "nnlite_tui", "lemur", "fetch", str(tree), "--sample", str(args.sample),
           "--seed", str(args.seed), "--version", args.version]
    if args.wheel_dir:
        cmd += ["--wheel", str(cached_wheel(args.wheel_dir, args.version))]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=python_env())
    if done.returncode != 0:
        sys.exit(f"nnlite lemur fetch failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    print(f"fetch: {done.stdout.strip()} ({time.monotonic() - t0:.0f} s)", flush=True)
    return json.loads(manifest.read_text())


def cached_wheel(folder: Path, version: str) -> Path:
    """The release's wheel in `folder`, downloaded there by pip (as `nnlite lemur fetch` does) if absent."""
    found = sorted(folder.glob(f"nn_dataset-{version}-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    print(f"fetch: downloading nn-dataset {version} into {folder}", flush=True)
    return download_wheel(version, folder)


def python_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


# ----- the run -----
def watch_run(args, work: Path, run: Path, cache: Path, csv_path: Path) -> tuple[list[Sample], int, float]:
    """Start the run, sample it every --every seconds until it ends; -> (samples, exit status, wall)."""
    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(work / "lemur"), "--headless", "--out", str(run),
           "--cache-dir", str(cache), *shlex.split(args.run_args)]
    print(f"run: {shlex.join(cmd)}\n     output in {work / 'run.log'}; samples in {csv_path}", flush=True)
    names = [f.name for f in fields(Sample)]
    with open(work / "run.log", "wb") as log, open(csv_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=names)
        writer.writeheader()
        t0 = time.monotonic()
        # Its own session: a Ctrl-C here reaches the run once, forwarded below, not twice.
        proc = psutil.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=python_env(), start_new_session=True)
        sampler = Sampler(proc, run, cache)
        print(HEADER, flush=True)
        next_at = args.every
        while True:
            try:
                proc.wait(timeout=max(0.0, next_at - (time.monotonic() - t0)))
                ended = True
            except psutil.TimeoutExpired:
                ended = False
            except KeyboardInterrupt:
                # The run's own handler: the first stops after the current step, the second abandons it.
                print("Ctrl-C: passed on to the run (again to abandon its current step)", flush=True)
                proc.send_signal(signal.SIGINT)
                continue
            elapsed = time.monotonic() - t0
            prev = sampler.samples[-1] if sampler.samples else None
            sample = sampler.take(elapsed, running=not ended)
            print(sample_line(sample, prev), flush=True)
            writer.writerow(asdict(sample))
            out.flush()
            if ended:
                return sampler.samples, proc.returncode, elapsed
            next_at += args.every


# ----- final figures -----
def unit_tables(run: Path) -> tuple[list, list[tuple[str, str]]]:
    """(the reports' summaries, (unit, cause) of each failed unit in the store, classified as `nnlite status` does)."""
    from nnlite_tui.core.convert.causes import classify
    from nnlite_tui.core.results import RunResults

    summaries = RunResults(run).summaries()
    _, records = load_snapshot(run)
    causes = []
    for rec in records:
        if rec.get("status") == "failed":
            err = rec.get("error") or {}
            causes.append((rec["name"], classify({"ok": False, "stage": err.get("stage"), "error_type": err.get("type"),
                                                  "error_message": err.get("message")})))
    return summaries, causes


def share(valid: int, total: int) -> str:
    return f"{valid:>5} / {total:<5} ({100 * valid / total:5.1f}%)" if total else f"{valid:>5} / {total:<5}"


def print_validity(summaries: list, work: Path, units: int) -> None:
    from nnlite_tui.core.results.summary import lemur_family

    valid = sum(1 for s in summaries if s.valid)
    print(f"valid              {share(valid, len(summaries))} of the reports; {units - len(summaries)} "
          f"of {units} units without a report")
    by_task: dict[str, Counter] = defaultdict(Counter)
    by_family: dict[str, Counter] = defaultdict(Counter)
    for s in summaries:
        by_task[s.task or "(none recorded)"][s.valid] += 1
        by_family[lemur_family(s.model)][s.valid] += 1
    print("by task:")
    for task, c in sorted(by_task.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {task:<26} {share(c[True], c[True] + c[False])}")
    ranked = sorted(by_family.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    print(f"by family ({len(ranked)}; the {min(FAMILY_LINES, len(ranked))} with most units, all in families.csv):")
    for family, c in ranked[:FAMILY_LINES]:
        print(f"  {family:<26} {share(c[True], c[True] + c[False])}")
    with open(work / "families.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["family", "units", "valid"])
        writer.writerows([family, c[True] + c[False], c[True]] for family, c in ranked)


def print_causes(causes: list[tuple[str, str]]) -> None:
    counted = Counter(cause for _, cause in causes)
    print(f"failure causes ({len(causes)} failed units, {len(counted)} causes; top {TOP_CAUSES}):")
    for cause, n in counted.most_common(TOP_CAUSES):
        print(f"  {cause:<26} {n:>5}")


def time_status(run: Path, repeats: int) -> list[float]:
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "nnlite_tui", "status", str(run)], stdout=subprocess.DEVNULL,
                       env=python_env(), check=True)
        walls.append(time.perf_counter() - t0)
    return walls


def time_console(run: Path, units: int, repeats: int) -> list[float] | str:
    """Seconds from start until the console's queue shows every unit (bench/tui_latency.py's pty)."""
    from bench.tui_latency import Terminal

    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        term = Terminal([sys.executable, "-m", "nnlite_tui", "tui", str(run)])
        shown = term.wait_for(f"Models {units}/{units}".encode(), 0, 120)
        term.write(b"q")
        if term.wait_exit(30) is None:
            return "the console did not quit on q"
        if shown is None:
            return f"the console never showed 'Models {units}/{units}' within 120 s"
        walls.append(shown - t0)
    return walls


def trend_line(label: str, trend: Trend | None, unit: str, scale: float = 1.0) -> str:
    if trend is None:
        return f"  {label:<38} too few samples to fit"
    pct = f", {trend.per_1000_pct:+.1f}% of the start" if trend.per_1000_pct is not None else ""
    noise = "within 2 s.e. of zero" if abs(trend.slope) <= 2 * trend.slope_stderr else "beyond 2 s.e."
    return (f"  {label:<38} start {trend.start / scale:8.1f} {unit:<5} growth per 1,000 models "
            f"{trend.per_1000 / scale:+.1f} ± {trend.slope_stderr * 1000 / scale:.1f} {unit} ({noise}{pct}; "
            f"{trend.points} points)")


def print_trends(samples: list[Sample], target: int, wall: float) -> None:
    """Each figure that should stay flat as a line over the models finished (from the first finished model
    on: start-up is not a trend), then the projection."""
    live = [s for s in samples if s.models_finished > 0]
    print("flat figures over the models finished (least squares over the samples, scipy.stats.linregress):")
    running = [s for s in live if s.running]
    print(trend_line("orchestrator RSS", fit([s.models_finished for s in running],
                                             [s.orchestrator_rss for s in running]), "MiB", MB))
    pairs = list(zip(samples, samples[1:]))
    records = [((a.models_finished + b.models_finished) / 2, b.record_bytes) for a, b in pairs
               if b.record_bytes is not None]
    print(trend_line("store bytes per unit (its record)", fit([x for x, _ in records], [y for _, y in records]),
                     "B"))
    xs = [s.models_finished for s in live]
    steps = [i for i in intervals([s.elapsed_s for s in live], xs, [s.events_bytes for s in live]) if i.models]
    print(trend_line("event-log bytes per model finished", fit([i.mid_models for i in steps],
                                                               [i.grown_per_model or 0.0 for i in steps]), "B"))
    rates = intervals([s.elapsed_s for s in live], xs)
    rate = fit([i.mid_models for i in rates], [i.per_hour for i in rates])
    print(trend_line("models/hour (each interval)", rate, "/h"))
    last = samples[-1]
    if last.models_finished == 0:
        print("projection: no model finished")
        return
    p = project(target, last.models_finished, wall / 3600, rate)
    if p.hours is not None and rate is not None:
        at_target = rate.start + rate.slope * target
        fitted = f"{p.hours:.1f} h (the fitted rate at {target:,} models: {at_target:.1f}/h)"
    else:
        fitted = "none (the fitted rate reaches zero first)" if rate else "none (too few samples to fit a rate)"
    print(f"projected wall for {target:,} models: {fitted}")
    print(f"  basis: the measured {clock(wall)} for the first {last.models_finished} models, the rest at the "
          f"fitted rate (start + growth x models finished; the integral of 1/rate), a line extrapolated "
          f"{target / last.models_finished:.0f}x past the models measured")
    print(f"  at the cumulative rate without trend ({last.models_finished / wall * 3600:.1f}/h): "
          f"{p.flat_hours:.1f} h"
          + ("  <- the better guide: the rate's trend is within noise" if rate and abs(rate.slope)
             <= 2 * rate.slope_stderr else ""))


def summarise(run: Path, work: Path, samples: list[Sample], wall: float, target: int, args) -> None:
    last = samples[-1]
    print(f"\n== {last.models_finished} models ({last.terminal} of {last.units} units terminal: done {last.done}, "
          f"failed {last.failed}, skipped {last.skipped}) in {clock(wall)}; load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"models/hour        {last.models_finished / wall * 3600:.1f} (cumulative)")
    print(f"orchestrator RSS   max {size(max(s.orchestrator_rss for s in samples))}; "
          f"workers' RSS (summed) max {size(max(s.workers_rss for s in samples))}")
    print(f"disk               run {size(last.run_disk)}, cache {size(last.cache_disk)}; "
          f"store {size(last.store_bytes)} ({last.store_bytes / max(last.units, 1):.0f} B per unit), "
          f"events.jsonl {size(last.events_bytes)} ({last.events_bytes / max(last.terminal, 1):.0f} B per unit)")
    summaries, causes = unit_tables(run)
    print_validity(summaries, work, last.units)
    print_causes(causes)
    walls = time_status(run, 3)
    print(f"nnlite status RUN  median {statistics.median(walls):.2f} s wall "
          f"({', '.join(f'{w:.2f}' for w in walls)})")
    if args.console_repeats:
        shown = time_console(run, last.units, args.console_repeats)
        print("console (nnlite tui RUN) until its queue shows every unit: "
              + (shown if isinstance(shown, str) else
                 f"median {statistics.median(shown):.2f} s ({', '.join(f'{w:.2f}' for w in shown)})"))
    print_trends(samples, target, wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=1000, help="models drawn from the release")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--version", default=DEFAULT_VERSION, help="the nn-dataset release")
    ap.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    ap.add_argument("--run-args", default="", help="more `nnlite run` options, as one shell-quoted string")
    ap.add_argument("--wheel-dir", type=Path, help="keep the downloaded wheel here and reuse it")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="work here and keep everything (else a temp folder)")
    ap.add_argument("--csv", type=Path, help="the samples' CSV (default WORK/samples.csv)")
    ap.add_argument("--project", type=int, default=None, metavar="N",
                    help="project the wall time for N models (default: every model of the release)")
    ap.add_argument("--console-repeats", type=int, default=3, help="console openings timed (0: none)")
    args = ap.parse_args()
    if args.every <= 0:
        ap.error("--every must be positive")

    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="nnlite-lemur-scale-"))
    run, cache = work / "run", work / "cache"
    if run.exists():
        sys.exit(f"{run} exists: this bench measures a fresh run; use another --keep folder")
    work.mkdir(parents=True, exist_ok=True)
    print(f"lemur_scale: {args.sample} models, seed {args.seed}, every {args.every:g} s, in {work}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    try:
        manifest = fetch_tree(args, work / "lemur")
        samples, status, wall = watch_run(args, work, run, cache, args.csv or work / "samples.csv")
        print(f"run ended with exit status {status}")
        summarise(run, work, samples, wall, args.project or manifest["models_in_release"], args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
