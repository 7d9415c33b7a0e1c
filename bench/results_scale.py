"""Looking up results in a 10,000-unit run: one unit's report by key, every summary, the console's
results screen filled.

Makes N reports (default 10,000) from one real report (default: the committed fixture run written by
release 0.1.0 with per-op profiles, so each report carries its raw samples and two ops blocks), with
the unit names of bench/tui_synthetic.py, latencies and parameter counts varied and a share of
failures. Then, in this order:

- first open of the run (no index yet: every report read once and its summary indexed),
- open with the index (what every later reader does) and all summaries,
- one unit's full report by exact key (a sample of 1,000 random keys, each timed),
- the console's results screen: every finished unit's parameter count (tui/results.ParamCache).

    .venv/bin/python bench/results_scale.py [--units 10000] [--from RUN_DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tui_synthetic import names  # noqa: E402

from nnlite_tui.core.results import RunResults, UnitKey, read_report  # noqa: E402
from nnlite_tui.core.run_dir import REPORTS_DIR, report_filename  # noqa: E402
from nnlite_tui.tui.results import ParamCache  # noqa: E402
from nnlite_tui.tui.screens.results import READS_PER_REFRESH, REFRESH_SECONDS  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "ops-schema3"


def build(base: dict, units: int, run_dir: Path, rng: random.Random) -> list[UnitKey]:
    folder = run_dir / REPORTS_DIR
    folder.mkdir(parents=True)
    keys = []
    for name in names(units):
        report = copy.deepcopy(base)
        scale = 10 ** rng.uniform(-1, 2)
        report["model_name"] = name
        report["model"].update(name=name, base_name=name, params=int(report["model"]["params"] * scale))
        if rng.random() < 0.08:
            report.update(valid=False, duration=None, error_message="lower: Error: not supported")
            report["error"] = {"stage": "lower", "type": "Error", "message": "not supported"}
        else:
            bench = report["benchmark"]
            bench["samples_ns"] = [int(s * scale) for s in bench["samples_ns"]]
            bench["stats"] = {k: (v if k == "count" else v * scale) for k, v in bench["stats"].items()}
            report["duration"] = int(bench["stats"]["median_ns"])
        (folder / report_filename(name, "host", "xnnpack")).write_text(json.dumps(report))
        keys.append(UnitKey(name, "host", "xnnpack"))
    return keys


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--from", dest="source", type=Path, default=FIXTURE, help="run whose first valid report "
                        "the synthetic ones are made from (default: the committed fixture run)")
    args = parser.parse_args()
    # Read file by file: opening the source as a run would leave its report index in it.
    base = next(r for p in sorted((args.source / REPORTS_DIR).glob("*.json"))
                if (r := read_report(p).to_json()).get("valid"))
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        keys = build(base, args.units, run_dir, rng)
        size = sum(p.stat().st_size for p in (run_dir / REPORTS_DIR).iterdir()) / len(keys)
        print(f"units: {len(keys)}, report size: {size / 1e3:.1f} kB each "
              f"({len(base['benchmark']['samples_ns'])} raw samples, ops blocks: "
              f"{sorted(k for k in base['benchmark'] if k.startswith('ops'))})")
        first, t_first = timed(lambda: RunResults(run_dir))
        print(f"first open (no index: every report read and indexed): {t_first:.2f} s")
        again, t_open = timed(lambda: RunResults(run_dir))
        summaries, t_sum = timed(again.summaries)
        print(f"open with the index + all {len(summaries)} summaries: {t_open + t_sum:.3f} s")
        lookups = []
        for key in rng.sample(keys, min(1000, len(keys))):
            report, took = timed(lambda key=key: again.get(key))
            assert report is not None and report.model_name == key.unit
            lookups.append(took)
        lookups.sort()
        print(f"one unit's report by key ({len(lookups)} keys): median {statistics.median(lookups) * 1e3:.3f} ms, "
              f"p99 {lookups[int(len(lookups) * 0.99) - 1] * 1e3:.3f} ms, max {lookups[-1] * 1e3:.3f} ms")
        # The results screen takes READS_PER_REFRESH counts per refresh, one refresh every REFRESH_SECONDS,
        # in a thread: filled after the last chunk's refresh plus that chunk's reading.
        cache = ParamCache()
        done = [s.unit for s in summaries if s.valid]
        chunks = [done[i:i + READS_PER_REFRESH] for i in range(0, len(done), READS_PER_REFRESH)]
        took = [timed(lambda chunk=chunk: cache.fill(str(run_dir), chunk))[1] for chunk in chunks]
        filled = sum(1 for v in cache.params.values() if v)
        fill_s = 0.0  # chunk k is asked for at refresh k, or when the one before it is done if later
        for k, seconds in enumerate(took):
            fill_s = max(fill_s, k * REFRESH_SECONDS) + seconds
        print(f"console results screen: parameter counts of {filled} finished units in {len(chunks)} refresh(es) "
              f"({sum(took):.3f} s reading): filled after {fill_s:.2f} s")
        del first
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
