#!/usr/bin/env python3
"""How much of a profiled run the per-op times account for, per report of a run directory.

    .venv/bin/python bench/ops_coverage.py RUN_DIR [--limit 0.85]

Reads every report's `ops` block (written by `nnlite run ... --profile-ops`) and prints per model:
LiteRT's Invoke time per run, the profiler's own measured cost inside it, the total (Invoke less
that cost), the ops' sum, ops / total (the coverage), ops / Invoke (what the raw figure would give),
the time in no op, how far the whole-µs event times can put the ops' sum from their real time
(`rounding_bound_us`), the half µs per XNNPACK operator added back for its rounding down
(`truncation_added_us`) and the unprofiled timed median. Exits 1 when a report has no usable block or a coverage is
below --limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--limit", type=float, default=0.85, help="lowest acceptable ops / total")
    args = parser.parse_args()
    reports = sorted((args.run_dir / "reports").glob("*.json"))
    if not reports:
        print(f"{args.run_dir}: no reports in {args.run_dir / 'reports'}", file=sys.stderr)
        return 1
    print(f"{'model':<22} {'Invoke':>8} {'profiler':>8} {'total':>8} {'ops':>8} {'ops/tot':>7} {'ops/Inv':>7} "
          f"{'in no op':>8} {'bound':>6} {'+trunc':>6} {'median':>8}   (µs)")
    failed = 0
    for path in reports:
        report = json.loads(path.read_text())
        block = (report.get("benchmark") or {}).get("ops") or {}
        name = report.get("model_name") or path.stem
        if not block.get("ops") or block.get("error") or not block.get("total_us"):
            print(f"{name:<22} no usable ops block: {block.get('error', 'absent')}")
            failed += 1
            continue
        coverage = block["ops_sum_us"] / block["total_us"]
        median = report["benchmark"]["stats"]["median_ns"] / 1e3
        print(f"{name:<22} {block.get('invoke_us', block['total_us']):8.1f} {block.get('profiler_us') or 0:8.1f} "
              f"{block['total_us']:8.1f} {block['ops_sum_us']:8.1f} {coverage:7.3f} "
              f"{block['ops_sum_us'] / block.get('invoke_us', block['total_us']):7.3f} {block['unattributed_us']:8.1f} "
              f"{block.get('rounding_bound_us', 0):6g} {block.get('truncation_added_us', 0):6g} {median:8.1f}{'  < limit' if coverage < args.limit else ''}")
        failed += coverage < args.limit
    print(f"{len(reports) - failed} of {len(reports)} reports within {1 - args.limit:.0%} of their profiled total")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
