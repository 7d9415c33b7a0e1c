#!/usr/bin/env python3
"""Conversion workers x torch threads per worker: throughput of each candidate on the same models.

    .venv/bin/python bench/convert_parallelism.py SOURCE [SOURCE...] [--limit N | --pick I,J,..]
        [--configs 1x2,2x1,2xA] [--repeats 2]

A config is WORKERSxTHREADS[:longest]; `A` means adaptive threads (a job gets the cores the running
jobs leave it); `:longest` converts costliest first as `nnlite run` does (the size probe of
core/convert/ranking.py runs inside the timed part), else in the given order. Each run uses a fresh, empty cache, so every model is really converted and validated,
and starts its workers cold (their import is part of the wall time). The configs alternate
(ABC ABC ...) so that a change in the machine's load hits all of them alike.

Per run it prints: wall seconds, models/hour, the workers' CPU seconds (their process trees read
while they live, every 0.2 s: the kernel's accounting of reaped children sees nothing of a sandboxed
worker, whose pid-namespace init is never reaped), the CPU the rest of the machine used meanwhile (other
users of a shared machine: their share makes wall figures noisy), and the sum of the recorded
conversion phases, how long the last conversion ran alone at the end (`--phases`: per model, wall/CPU seconds of each phase), and the share of the workers' CPU spent on each worker's busiest thread (near
100%: extra torch threads buy nothing). Then per config the median over its runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.ranking import UNKNOWN, probe  # noqa: E402
from nnlite_tui.core.convert.phases import totals  # noqa: E402
from nnlite_tui.core.convert.process_tree import tree_cpu_s  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores)."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class _WorkersCpu:
    """CPU seconds of the converter's worker process trees, the last reading of each kept after it ends."""

    def __init__(self, conv) -> None:
        self.conv, self.seen, self.done = conv, {}, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def sample(self) -> None:
        for w in list(self.conv._all):
            proc = w.process
            if proc is not None:
                cpu = tree_cpu_s(proc.pid)
                self.seen[proc.pid] = max(cpu, self.seen.get(proc.pid, 0.0))

    def stop(self) -> float:
        self.sample()
        self.done.set()
        self.thread.join()
        return sum(self.seen.values())


def _thread_cpu(pid: int) -> list[float]:
    """CPU seconds of each thread of a live process, busiest first: how parallel its work was."""
    tck = os.sysconf("SC_CLK_TCK")
    cpu = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu.append((int(fields[11]) + int(fields[12])) / tck)
    return sorted(cpu, reverse=True)


def _self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _longest_first(specs) -> list:
    """specs ordered as `nnlite run` converts them: by the size probe's estimate, costliest first."""
    costs: dict[str, float] = {}
    probe(specs, costs.__setitem__)
    return sorted(specs, key=lambda s: -costs.get(s.name, UNKNOWN))


def run_config(config: str, specs, tmp: Path) -> dict:
    shape, _, order = config.lower().partition(":")
    workers, threads = shape.split("x")
    opts = ConvertOptions(workers=int(workers), threads_per_worker=0 if threads == "a" else int(threads),
                          cache_dir=tmp / "cache")
    busy0, me0 = _machine_busy(), _self_cpu()
    t0 = time.monotonic()
    done_at: list[float] = []
    with Converter(opts, log_dir=tmp, n_workers=int(workers)) as conv:
        workers_cpu = _WorkersCpu(conv)
        if order == "longest":
            conv.prestart()  # as the pipeline does: the workers import while the probe measures
            specs = _longest_first(specs)
        results = conv.convert_many(specs, tmp / "out", on_result=lambda *_: done_at.append(time.monotonic()))
        by_thread = [_thread_cpu(pid) for pid in conv.worker_pids()]
        ours = workers_cpu.stop()  # the workers, while they still run
    wall = time.monotonic() - t0
    # How long the last conversion ran with the other workers idle (nothing left for them).
    alone = done_at[-1] - done_at[-int(workers)] if int(workers) > 1 and len(done_at) >= int(workers) else 0.0
    others = _machine_busy() - busy0 - ours - (_self_cpu() - me0)
    phase_wall, phase_cpu = (sum(x) for x in zip(*(totals(r.get("phases")) for r in results)))
    busiest = sum(t[0] for t in by_thread if t)
    return {"alone": alone, "results": results, "main_share": busiest / max(1e-9, sum(sum(t) for t in by_thread)), "config": config, "wall": wall, "ok": sum(1 for r in results if r.get("ok")), "n": len(results),
            "cpu": ours, "others": max(0.0, others), "phase_cpu": phase_cpu, "phase_wall": phase_wall}


def _print_phases(results: list[dict]) -> None:
    """Per model: file size, then wall/CPU seconds per phase, and the CPU share of each phase overall."""
    sums: dict[str, float] = {}
    for r in results:
        phases = r.get("phases") or {}
        for name, cost in phases.items():
            sums[name] = sums.get(name, 0.0) + cost["cpu_s"]
        size = f"{(r.get('artifact_bytes') or 0) / 2**20:7.1f} MB"
        print(f"    {str(r.get('model'))[:32]:32} {size}  " +
              " ".join(f"{k} {v['s']:.2f}/{v['cpu_s']:.2f}" for k, v in phases.items()), flush=True)
    total = sum(sums.values()) or 1.0
    print("    CPU by phase: " + ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)"
                                          for k, v in sorted(sums.items(), key=lambda kv: -kv[1])), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--pick", help="comma-separated indices into the discovered models")
    ap.add_argument("--configs", default="1x2,2x1,2xA", help="e.g. 1x2,2x1,2xA or 2x1,2x1:longest")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--phases", action="store_true", help="print each model's phases (first run of each config)")
    args = ap.parse_args()
    specs = discover(args.sources, limit=args.limit)
    if args.pick:
        specs = [specs[int(i)] for i in args.pick.split(",")]
    configs = args.configs.split(",")
    print(f"{len(specs)} models, {os.cpu_count()} cores, configs {' '.join(configs)}, {args.repeats} repeats",
          flush=True)
    print("given order: " + ", ".join(s.name[:24] for s in specs), flush=True)
    runs: list[dict] = []
    for rep in range(args.repeats):
        for config in configs:
            with tempfile.TemporaryDirectory() as tmp:
                r = run_config(config, specs, Path(tmp))
            runs.append(r)
            if args.phases and rep == 0:
                _print_phases(r["results"])
            print(f"run {rep + 1} {config:5} wall {r['wall']:6.1f} s  {r['n'] / r['wall'] * 3600:5.0f} models/h  "
                  f"workers' CPU {r['cpu']:6.1f} s  others' CPU {r['others']:6.1f} s  "
                  f"phases {r['phase_wall']:6.1f} s wall / {r['phase_cpu']:6.1f} s CPU  "
                  f"busiest thread {100 * r['main_share']:3.0f}% of the workers' CPU  last alone {r['alone']:5.1f} s  "
                  f"({r['ok']}/{r['n']} ok)",
                  flush=True)
    print("median per config:")
    for config in configs:
        mine = [r for r in runs if r["config"] == config]
        wall = statistics.median(r["wall"] for r in mine)
        print(f"  {config:5} wall {wall:6.1f} s  {len(specs) / wall * 3600:5.0f} models/h  "
              f"workers' CPU {statistics.median(r['cpu'] for r in mine):6.1f} s  "
              f"others' CPU {statistics.median(r['others'] for r in mine):6.1f} s  "
              f"last alone {statistics.median(r['alone'] for r in mine):5.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
