"""Cost of one RunStore state transition at 100 and at 10,000 records; the ratio must stay under 3x.

Each model goes converting -> converted -> benchmarking -> done|failed|skipped, as the pipeline
moves it; the terminal transition fsyncs the journal before it returns. The background flusher
runs as in a real run. A real run compacts (rewrites state.json whole) once the journal is as long
as the table, i.e. rarely at 10,000 records; here a thread also compacts every --compact-every
seconds at both sizes, so the timings include the worst of a compaction's interference.

    .venv/bin/python bench/store_scale.py [--transitions 8000] [--compact-every 0.25]

Exits 1 if the mean or p99 cost at 10,000 records is 3x or more the cost at 100.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.store import RunStore

MAX_RATIO = 3.0
KINDS = {"all": "all", "non-terminal": "non-terminal (written behind)", "terminal": "terminal (fsynced)"}


def spec(i: int) -> dict:
    return {"path": f"/data/lemur/ab/nn/nn/model_{i:05d}.py", "task": "img-classification", "dataset": "cifar-10",
            "in_shape": [1, 3, 32, 32], "out_shape": [10], "prm": {"lr": 0.01, "momentum": 0.9, "dropout": 0.2}}


def plan(i: int) -> list[tuple[str, dict]]:
    """The transitions of one model's pass, with the fields the pipeline sets."""
    terminal = TERMINAL[i % 3]
    end = {"done": {"report": f"reports/model_{i:05d}.json", "median_ms": 1.25},
           "failed": {"error": {"stage": "benchmark", "type": "AdbError", "message": "device offline"}},
           "skipped": {"stage": None}}[terminal]
    return [("converting", {"stage": "convert", "attempts": 1}),
            ("converted", {"timings": {"convert": 2.1, "validate": 0.3}, "artifact": f"artifacts/model_{i:05d}.tflite"}),
            ("benchmarking", {"stage": "benchmark", "device": "emulator-5554"}),
            (terminal, end)]


def compact_every(store: RunStore, seconds: float, stop: threading.Event) -> None:
    while not stop.wait(seconds):
        store.compact()


def measure(records: int, transitions: int, flush_interval: float, compact_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"store_scale_{records}_") as tmp:
        store = RunStore(tmp, flush_interval=flush_interval)
        store.add_models([{"name": f"model_{i:05d}", "spec": spec(i)} for i in range(records)])
        store.compact()
        names, compactions = store.names(), store.compactions
        stop = threading.Event()
        compactor = threading.Thread(target=compact_every, args=(store, compact_s, stop))
        compactor.start()
        every: list[int] = []
        terminal: list[int] = []
        other: list[int] = []
        i = 0
        while len(every) < transitions:
            for status, fields in plan(i):
                started = time.perf_counter_ns()
                store.transition(names[i % records], status, **fields)
                elapsed = time.perf_counter_ns() - started
                every.append(elapsed)
                (terminal if status in TERMINAL else other).append(elapsed)
            i += 1
        stop.set()
        compactor.join()
        compactions = store.compactions - compactions
        last_compact_s = store.last_compact_s
        store.close()
    return {"records": records, "all": every, "terminal": terminal, "non-terminal": other, "compactions": compactions,
            "last_compact_ms": last_compact_s * 1e3}


def mean_us(samples: list[int]) -> float:
    return statistics.fmean(samples) / 1e3


def p99_us(samples: list[int]) -> float:
    return statistics.quantiles(samples, n=100)[98] / 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=8_000, help="timed transitions per size")
    parser.add_argument("--flush-interval", type=float, default=0.05, help="seconds of write-behind")
    parser.add_argument("--compact-every", type=float, default=0.25, help="seconds between forced compactions")
    args = parser.parse_args()
    small, large = (measure(n, args.transitions, args.flush_interval, args.compact_every) for n in (100, 10_000))
    for row in (small, large):
        print(f"{row['records']:>6} records, {len(row['all'])} transitions, {row['compactions']} compactions "
              f"(last {row['last_compact_ms']:.1f} ms):")
        for kind, label in KINDS.items():
            print(f"    {label + ' transitions':<42} mean {mean_us(row[kind]):8.1f} us   "
                  f"p99 {p99_us(row[kind]):8.1f} us")
    ratios = {f"{kind} {stat.__name__[:-3]}": stat(large[kind]) / stat(small[kind])
              for kind in ("all", "non-terminal", "terminal") for stat in (mean_us, p99_us)}
    print("ratio 10,000 / 100 records: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
    worst = max(ratios["all mean"], ratios["all p99"])
    verdict = "OK" if worst < MAX_RATIO else "FAIL"
    print(f"{verdict}: per-transition cost ratio {worst:.2f}x (limit {MAX_RATIO:.0f}x)")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
