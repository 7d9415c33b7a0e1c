#!/usr/bin/env python3
"""How much of a profiled run the measured per-op times account for, per report of a run directory.

    .venv/bin/python bench/ops_coverage.py RUN_DIR [--limit 0.85]
    .venv/bin/python bench/ops_coverage.py --chain 256

With --chain N, instead of a run directory: the profiler calibration's chain of N ADDs of 16 floats
(each far under a µs), benchmarked and profiled by the host device as `nnlite run --profile-ops` does.

Reads every report's `ops` block (written by `nnlite run ... --profile-ops`; older schema versions
read as the current one) and prints per model: LiteRT's Invoke time per run, the profiler's own
measured cost inside it, the total (Invoke less that cost, "-" when that cost is not below Invoke),
the measured ops' sum, ops / total (the coverage), the time in no measured op (`unattributed_us`),
how many ops were measured / below resolution / fused, how far the whole-µs readings can put the
ops' real time from their sum (`rounding_bound_us`), the unprofiled timed median, and whether the
block passed its checks. Exits 1 when a report has no usable block, a block fails its checks, or
even the ops' sum plus the rounding bound covers less than --limit of the total.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.ops.block_versions import read_block  # noqa: E402


def _f(value: float | None, width: int = 8, digits: int = 1) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def row(name: str, block: dict | None, median_ns: float, limit: float) -> bool:
    """Prints one model's line; True when it fails (no usable block, invalid, or short of `limit`)."""
    block = read_block(block) or {}
    if not block.get("ops") or block.get("error"):
        print(f"{name:<22} no usable ops block: {block.get('error', 'absent')}")
        return True
    total = block.get("total_us")
    coverage = block["ops_sum_us"] / total if total else None
    upper = (block["ops_sum_us"] + block["rounding_bound_us"]) / total if total else None
    timings = block["timings"]
    counts = f"{timings['measured']}/{timings['below_resolution']}/{timings['fused']}"
    short = upper is not None and upper < limit
    checks = "valid" if block.get("valid") else "INVALID: " + "; ".join(block.get("invalid_reasons") or [])
    print(f"{name:<22} {_f(block.get('invoke_us'))} {_f(block.get('profiler_us'))} {_f(total)} "
          f"{_f(block['ops_sum_us'])} {_f(coverage, 7, 3)} {_f(block.get('unattributed_us'))} {counts:>16} "
          f"{block['rounding_bound_us']:6g} {median_ns / 1e3:8.1f}  {checks}{'  < limit' if short else ''}")
    if total is None:
        print(f"{'':<22} total not resolved: {block.get('total_note')}")
    return short or not block.get("valid")


def chain_result(ops: int) -> dict:
    """The host device's benchmark result, with an XNNPACK ops block, of a chain of `ops` ADDs."""
    import tempfile

    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.devices.local import LocalDevice
    from nnlite_tui.core.outcomes import Artifact
    from nnlite_tui.core.runtimes.litert.profiler_calibration import chain_model

    with tempfile.TemporaryDirectory(prefix="nnlite-chain-") as tmp:
        path = f"{tmp}/chain{ops}.tflite"
        chain_model(path, ops)
        device = LocalDevice()
        try:
            return device.benchmark(Artifact(path), BenchSettings(profile_ops="xnnpack"), "chain")
        finally:
            device.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, nargs="?")
    parser.add_argument("--chain", type=int, metavar="N", help="profile a chain of N ADDs instead of a run")
    parser.add_argument("--limit", type=float, default=0.85,
                        help="lowest acceptable (ops + rounding bound) / total")
    args = parser.parse_args()
    if (args.run_dir is None) == (args.chain is None):
        parser.error("give a RUN_DIR or --chain N")
    header = (f"{'model':<22} {'Invoke':>8} {'profiler':>8} {'total':>8} {'ops':>8} {'ops/tot':>7} {'in no op':>8} "
              f"{'meas/below/fused':>16} {'bound':>6} {'median':>8}  checks   (µs)")
    if args.chain:
        result = chain_result(args.chain)
        if not result.get("valid"):
            print(f"chain of {args.chain} ADDs: benchmark failed: {result.get('error_message')}", file=sys.stderr)
            return 1
        print(header)
        return 1 if row(f"chain{args.chain}", result.get("ops"), result["stats"]["median_ns"], args.limit) else 0
    reports = sorted((args.run_dir / "reports").glob("*.json"))
    if not reports:
        print(f"{args.run_dir}: no reports in {args.run_dir / 'reports'}", file=sys.stderr)
        return 1
    print(header)
    failed = 0
    for path in reports:
        report = json.loads(path.read_text())
        bench = report.get("benchmark") or {}
        failed += row(report.get("model_name") or path.stem, bench.get("ops"),
                      (bench.get("stats") or {}).get("median_ns") or 0.0, args.limit)
    print(f"{len(reports) - failed} of {len(reports)} reports valid and within {1 - args.limit:.0%} of their profiled "
          "total (ops plus rounding bound)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
