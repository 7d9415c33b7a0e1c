#!/usr/bin/env python3
"""The timeline of one `nnlite run`, from its events.jsonl and reports, or of one naive reference run,
from its output lines: where the wall time went.

    .venv/bin/python bench/run_timeline.py RUN_DIR

Figures (used by pipeline_vs_naive.py):
  convert s       sum of the conversions' seconds (a conversion's wall time in its worker, stages
                  held back by a host benchmark's pause taken out)
  pause s         sum of the time host benchmarks held the conversions back (isolated_s), and the
                  median per model
  bench s         sum of the benchmark stages, every round (device side: push, launch, poll, pull;
                  host: the process)
  work s          the benchmark's own work per the reports: load, first run, warm-up, timed runs, of
                  every round
  reference s     what timing the devices' reference model cost, and its share of the wall time
  host cost       per model, median of benchmark stage seconds minus its work (and, in the pause,
                  pause minus work)
  tail s          from the end of the last conversion to the end of the run
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

NAIVE_LINE = re.compile(r"^ok\s+(\S+) median \S+ ms convert ([0-9.]+) s bench ([0-9.]+) s")


@dataclass
class Timeline:
    wall_s: float = 0.0
    models: int = 0
    convert_s: dict[str, float] = field(default_factory=dict)
    bench_s: dict[str, float] = field(default_factory=dict)
    pause_s: dict[str, float] = field(default_factory=dict)
    work_s: dict[str, float] = field(default_factory=dict)
    tail_s: float | None = None
    reference_s: float = 0.0
    references: int = 0

    def line(self, label: str, naive: Timeline | None = None) -> str:
        conv = sum(self.convert_s.values())
        text = f"{label:<7} wall {self.wall_s:7.1f} s  convert {conv:7.1f} s"
        if naive is not None:
            common = [m for m in self.convert_s if m in naive.convert_s]
            mine, theirs = sum(self.convert_s[m] for m in common), sum(naive.convert_s[m] for m in common)
            if mine > 0:
                text += f" (efficiency vs naive {theirs / mine:.2f})"
        text += f"  bench {sum(self.bench_s.values()):6.1f} s"
        if self.pause_s:
            pauses = list(self.pause_s.values())
            text += f"  pause {sum(pauses):6.1f} s (median {statistics.median(pauses):.2f} s/model)"
        if self.tail_s is not None:
            text += f"  tail {self.tail_s:5.1f} s"
        if self.references:
            text += (f"  reference {self.reference_s:.1f} s in {self.references} "
                     f"({self.reference_s / self.wall_s:.1%} of the wall)")
        return text

    def host_cost(self) -> str | None:
        """Per model, what a benchmark costs beyond its own work: in the stage, and inside the pause."""
        stage = [self.bench_s[m] - w for m, w in self.work_s.items() if m in self.bench_s]
        paused = [self.pause_s[m] - w for m, w in self.work_s.items() if m in self.pause_s]
        if not stage:
            return None
        text = f"benchmark cost beyond its work: median {statistics.median(stage):.3f} s/model per stage"
        if paused:
            text += f", {statistics.median(paused):.3f} s/model inside the pause"
        return text


def _work_s(block: dict) -> float | None:
    """A benchmark's own work: of each round (report schema 3), else of its one process."""
    rounds = block.get("rounds")
    if rounds:
        works = [_work_s(r) for r in rounds]
        return None if None in works else sum(works)
    try:
        return (block["init_ns"] + block["first_inference_ns"]) / 1e9 + block["timed_seconds"] + \
            block["warmup_runs"] * (block["warmup_mean_ns"] or 0) / 1e9
    except (KeyError, TypeError):
        return None  # a failed benchmark, or a device that does not report these


def from_run(run_dir: Path) -> Timeline:
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    t = Timeline()
    start = next(e["ts"] for e in events if e["type"] == "RunStarted")
    end = next((e["ts"] for e in reversed(events) if e["type"] == "RunFinished"), events[-1]["ts"])
    t.wall_s = end - start
    windows = []  # when host benchmarks held conversions back
    last_convert = None
    for e in events:
        if e["type"] == "ReferenceTimed":
            t.reference_s += e["seconds"]
            t.references += 1
        if e["type"] != "StageFinished":
            continue
        if e["stage"] == "benchmark":  # summed over the unit's rounds
            t.bench_s[e["model"]] = t.bench_s.get(e["model"], 0.0) + e["seconds"]
            if e.get("isolated_s") is not None:
                t.pause_s[e["model"]] = t.pause_s.get(e["model"], 0.0) + e["isolated_s"]
                windows.append((e["ts"] - e["isolated_s"], e["ts"]))
        elif e["stage"] == "convert":
            last_convert = max(last_convert or 0.0, e["ts"])
    for e in events:
        if e["type"] == "StageFinished" and e["stage"] == "convert":
            begin, finish = e["ts"] - e["seconds"], e["ts"]
            held = sum(max(0.0, min(finish, b) - max(begin, a)) for a, b in windows)
            t.convert_s[e["model"]] = e["seconds"] - held
    t.tail_s = end - last_convert if last_convert is not None else None
    for path in (run_dir / "reports").glob("*.json"):
        report = json.loads(path.read_text())
        work = _work_s(report.get("benchmark") or {})
        if work is not None:
            t.work_s[report["model"]["name"] if isinstance(report.get("model"), dict) else path.stem] = work
    t.models = len(t.bench_s)
    return t


def from_naive(output: str, wall_s: float) -> Timeline:
    t = Timeline(wall_s=wall_s)
    for line in output.splitlines():
        m = NAIVE_LINE.match(line)
        if m:
            t.convert_s[m[1]], t.bench_s[m[1]] = float(m[2]), float(m[3])
    t.models = len(t.bench_s)
    t.tail_s = None  # one model after the other: its last benchmark is its tail
    return t


def main() -> int:
    t = from_run(Path(sys.argv[1]))
    print(t.line("nnlite"))
    cost = t.host_cost()
    if cost:
        print(cost)
    return 0


if __name__ == "__main__":
    sys.exit(main())
