#!/usr/bin/env python3
"""What the sandbox costs: per worker start and per conversion, the same work with and without it.

    .venv/bin/python bench/sandbox_overhead.py [MODEL.py ...] [--rounds 8] [--repeats 2] [--micro 20]

Each round starts one conversion worker of each kind, plain (`--no-sandbox`) and sandboxed (bubblewrap,
the attempt record, the parent's checks around each job), in alternating order (ABBA...: the machine's
drift weighs on both alike), and has it convert every model --repeats times (no cache); then it
stops the worker. Figures:
  start      wall seconds from Popen to the worker's "ready" (imports included), and the worker's
             own CPU seconds by then;
  convert    wall seconds of Converter.convert() per model, the first conversion in a worker apart
             (it pays the converter's lazy set-up) from the later ones, and the later ones' CPU (the
             result's phases); the parent's own checks after each sandboxed job, in ms;
  lifetime   CPU seconds of the worker's process tree from its start to its last job (psutil on the
             live tree, bwrap and its init included: the kernel's RUSAGE_CHILDREN sees nothing of a
             sandboxed process, whose pid-namespace init is never reaped);
  micro      `bwrap ... true` against `true` alone, and the availability check: milliseconds.
Each figure: the medians, and the median of the per-round ratios sandboxed/plain with a 95% bootstrap
interval (scipy); p from the Wilcoxon signed-rank test on the pairs when there are 6 rounds or more.
On a shared machine wall time mostly measures the other users: read the CPU rows first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.convert.process_tree import tree_cpu_s  # noqa: E402
from nnlite_tui.core.convert.sandbox.availability import check  # noqa: E402
from nnlite_tui.core.convert.sandbox.launch import launch_for  # noqa: E402
from nnlite_tui.core.convert.sandbox.policy import SandboxPolicy  # noqa: E402
from nnlite_tui.core.spec import ModelSpec, sha256_file  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODELS = (REPO / "sample_models" / "plain_cnn.py", REPO / "sample_models" / "mnist_lenet.py")
PRM = {"lr": 0.01, "momentum": 0.9, "dropout": 0.1}


def one_worker(kind: str, specs: list[ModelSpec], repeats: int, root: Path) -> dict[str, list[float]]:
    """Start one worker of `kind`, convert every spec `repeats` times, stop it: its figures."""
    run = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=root))
    logs = run / "logs"
    logs.mkdir()
    opts = ConvertOptions(cache_dir=run / "cache", use_cache=False, workers=1, timeout_s=600,
                          sandbox="off" if kind == "plain" else "require",
                          sandbox_sources=tuple(sorted({str(Path(s.file).parent) for s in specs})))
    fig: dict[str, list[float]] = {"start_s": [], "start_cpu_s": [], "first_s": [], "lifetime_cpu_s": [],
                                   "check_ms": []}
    conv = Converter(opts, log_dir=logs)
    try:
        worker = conv._all[0]
        t0 = time.perf_counter()
        worker.start()
        fig["start_s"].append(time.perf_counter() - t0)
        fig["start_cpu_s"].append(worker.start_cost["cpu_s"])
        first = True
        for _ in range(repeats):
            for spec in specs:
                t0 = time.perf_counter()
                result = conv.convert(spec, run / "out" / f"{spec.name}.tflite", logs / f"{spec.name}.log")
                took = time.perf_counter() - t0
                if not result.get("ok"):
                    raise SystemExit(f"{kind}: {spec.name} failed: {result.get('stage')}: "
                                     f"{result.get('error_message')}")
                if first:
                    fig["first_s"].append(took)
                else:  # per model; the job's CPU is all its phases (the worker's and the parent's cache steps)
                    fig.setdefault(f"warm_s:{spec.name}", []).append(took)
                    cpu = sum(p.get("cpu_s", 0.0) for p in result.get("phases", {}).values())
                    fig.setdefault(f"warm_cpu_s:{spec.name}", []).append(cpu)
                if getattr(worker, "check_s", None) is not None:
                    fig["check_ms"].append(worker.check_s * 1000)
                first = False
        fig["lifetime_cpu_s"].append(tree_cpu_s(worker.process.pid))
    finally:
        conv.close()
    shutil.rmtree(run, ignore_errors=True)
    return fig


def micro(n: int, root: Path) -> dict[str, list[float]]:
    true = shutil.which("true") or "/bin/true"
    found = check()
    launch = launch_for(found, [true], SandboxPolicy(scratch=root / "micro", max_tasks=found.max_tasks))
    out: dict[str, list[float]] = {"true_ms": [], "bwrap_true_ms": [], "check_ms": []}
    try:
        for i in range(n):
            for name, argv, env in (("true_ms", [true], None), ("bwrap_true_ms", launch.argv, launch.env))[
                                    :: 1 if i % 2 == 0 else -1]:
                fds = launch.pass_fds if argv is launch.argv else ()  # the seccomp program bwrap reads
                t0 = time.perf_counter()
                subprocess.run(argv, check=True, env=env, pass_fds=fds)
                out[name].append((time.perf_counter() - t0) * 1000)
    finally:
        launch.release()
    for _ in range(max(3, n // 4)):
        t0 = time.perf_counter()
        check()
        out["check_ms"].append((time.perf_counter() - t0) * 1000)
    return out


def ratio_row(name: str, plain: list[float], boxed: list[float], unit: str) -> str:
    from scipy import stats

    mp, mb = statistics.median(plain), statistics.median(boxed)
    n = min(len(plain), len(boxed))
    ratios = [b / p for p, b in zip(plain[:n], boxed[:n]) if p > 0]
    text = f"{name:26s} plain {mp:8.3f} {unit}  sandboxed {mb:8.3f} {unit}  ({mb - mp:+.3f})"
    if len(ratios) >= 2:
        rm = statistics.median(ratios)
        ci = stats.bootstrap((ratios,), statistics.median, confidence_level=0.95, n_resamples=2000,
                             method="percentile", random_state=0).confidence_interval
        text += f"  ratio {rm:.3f} [{ci.low:.3f}, {ci.high:.3f}]"
        if n >= 6:
            text += f"  p={stats.wilcoxon(plain[:n], boxed[:n]).pvalue:.2f}"
    return text + f"  n={n}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path, default=list(DEFAULT_MODELS))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2, help="conversions of each model per worker")
    ap.add_argument("--micro", type=int, default=20, help="alternations of `true` and `bwrap ... true`")
    args = ap.parse_args()
    in_effect = check()
    if not in_effect.sandboxed:
        raise SystemExit(in_effect.describe())
    specs = [ModelSpec(name=p.stem, kind="lemur", file=str(p.resolve()), sha256=sha256_file(str(p)), prm=PRM)
             for p in args.models]
    root = Path(tempfile.mkdtemp(prefix="nnlite-sandbox-overhead-"))
    load0 = os.getloadavg()
    per: dict[str, dict[str, list[float]]] = {"plain": {}, "sandboxed": {}}
    try:
        m = micro(args.micro, root)
        for r in range(args.rounds):
            order = ("plain", "sandboxed") if r % 2 == 0 else ("sandboxed", "plain")
            for kind in order:
                fig = one_worker(kind, specs, args.repeats, root)
                for k, v in fig.items():
                    if v:  # several conversions per worker: their median, so each round gives one pair
                        per[kind].setdefault(k, []).append(statistics.median(v))
                warm = ", ".join(f"{k.split(':')[1]} {statistics.median(v):.2f} s" for k, v in fig.items()
                                 if k.startswith("warm_s:"))
                print(f"round {r + 1}/{args.rounds} {kind:9s} start {fig['start_s'][0]:6.2f} s, first "
                      f"{fig['first_s'][0]:5.2f} s, later: {warm}, lifetime CPU {fig['lifetime_cpu_s'][0]:6.2f} s",
                      flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nsandbox: {in_effect.describe()}; {len(specs)} models x {args.repeats} per worker "
          f"({', '.join(s.name for s in specs)}); load average {load0[0]:.1f} -> {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (a shared machine: wall times carry the other users' work)")
    rows = [("worker start (wall)", "start_s", "s"), ("worker start (CPU)", "start_cpu_s", "s"),
            (f"first: {specs[0].name} (wall)", "first_s", "s")]
    if args.repeats > 1:
        for spec in specs:
            rows += [(f"{spec.name} (wall)", f"warm_s:{spec.name}", "s"),
                     (f"{spec.name} (CPU)", f"warm_cpu_s:{spec.name}", "s")]
    rows.append(("worker lifetime (CPU)", "lifetime_cpu_s", "s"))
    for label, key, unit in rows:
        print(ratio_row(label, per["plain"][key], per["sandboxed"][key], unit))
    print(ratio_row("spawn: true vs bwrap", m["true_ms"], m["bwrap_true_ms"], "ms"))
    checks = per["sandboxed"].get("check_ms", [])
    if checks:
        print(f"{'parent checks per job':26s} median {statistics.median(checks):.1f} ms (the sandbox's state after "
              f"a job, and the verdict)")
    print(f"{'availability check':26s} median {statistics.median(m['check_ms']):.1f} ms  n={len(m['check_ms'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
