#!/usr/bin/env python3
"""The precision matrix on the host: per model and precision, the .tflite size, the median latency,
the speed-up against fp32 and what the precision costs in accuracy (against PyTorch fp32).

    .venv/bin/python bench/precision_matrix.py [SOURCE...] [--runs N] [--min-seconds S] [--threads T]

SOURCE defaults to sample_models. Converts fp32 and derives fp16, dynamic-range int8 and full int8
(ai-edge-quantizer) in a fresh, empty cache, closes the conversion workers, then times every file
on this host with the benchmark protocol (XNNPACK), one after another.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.protocol import benchmark_result  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.sources.units import PRECISIONS, base_spec  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=[str(REPO / "sample_models")])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()
    specs = discover(args.sources, precisions=PRECISIONS)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        options = ConvertOptions(workers=args.workers, cache_dir=out / "cache")
        with Converter(options, log_dir=None, n_workers=options.worker_count(len(specs))) as converter:
            results = {r["model"]: r for r in converter.convert_many(specs, out / "tflite")}
        settings = BenchSettings(runs=args.runs, min_seconds=args.min_seconds, threads=args.threads)
        rows = []
        for spec in specs:
            result = results[spec.name]
            median = None
            if result.get("ok"):
                block = benchmark_result(result["artifact_path"], settings)
                median = block["stats"]["median_ns"] / 1e6 if block["valid"] else None
            rows.append((spec, result, median))
    fp32 = {spec.name: (result, median) for spec, result, median in rows if spec.precision == "fp32"}
    print(f"{'model':<20} {'precision':<13} {'bytes':>10} {'x fp32':>7} {'median ms':>10} {'speed-up':>9} "
          f"{'top-1':>6} {'cosine':>9} {'max rel err':>12}  accuracy")
    for spec, result, median in sorted(rows, key=lambda r: (base_spec(r[0]).name, PRECISIONS.index(r[0].precision))):
        base_result, base_median = fp32.get(base_spec(spec).name, ({}, None))
        if not result.get("ok"):
            print(f"{base_spec(spec).name:<20} {spec.precision:<13} FAILED {result.get('stage')}: "
                  f"{result.get('error_message')}")
            continue
        size = result["artifact_bytes"]
        ratio = size / base_result["artifact_bytes"] if base_result.get("artifact_bytes") else None
        acc = result.get("accuracy") or {}
        top1 = acc.get("top1_agreement")
        print(f"{base_spec(spec).name:<20} {spec.precision:<13} {size:>10,} {_f(ratio, '.2f'):>7} "
              f"{_f(median, '.3f'):>10} {_f(base_median / median if base_median and median else None, '.2f'):>9} "
              f"{_f(top1, '.2f'):>6} {_f(acc.get('cosine'), '.5f'):>9} {_f(acc.get('max_abs_err_rel'), '.2e'):>12}  "
              f"{acc.get('verdict', '-')}")
    return 0


def _f(value, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


if __name__ == "__main__":
    sys.exit(main())
