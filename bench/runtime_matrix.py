#!/usr/bin/env python3
"""The runtime matrix on the host: per model (and precision), LiteRT's and ExecuTorch's file size, median
latency, the ratio ExecuTorch / LiteRT, what XNNPACK took of ExecuTorch's graph, and accuracy against
PyTorch (fp32: the validation's max abs diff; int8: cosine and top-1 agreement on 16 inputs).

    .venv/bin/python bench/runtime_matrix.py [SOURCE...] [--precision fp32,int8] [--rounds 2] [--runs N]
                                             [--min-seconds S] [--threads T]

SOURCE defaults to sample_models. Converts every unit in a fresh, empty cache, closes the conversion
workers, then times each file with the host device (a fresh benchmark process per measurement, the
product's own path) in alternating order, LiteRT, ExecuTorch, ExecuTorch, LiteRT per round (ABBA), so
that a drift of the machine's speed during a model's measurements falls on both runtimes alike; a
runtime's median is the median of its measurements' medians (two per round).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.bench.settings import BenchSettings  # noqa: E402
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.devices.local import LocalDevice  # noqa: E402
from nnlite_tui.core.outcomes import Artifact  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402
from nnlite_tui.core.sources.units import parse_precisions, parse_unit  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RUNTIMES = ("litert", "executorch")


def measure(device: LocalDevice, result: dict, settings: BenchSettings) -> float | None:
    block = device.benchmark(Artifact(result["artifact_path"], result.get("runtime") or "litert"), settings, "matrix")
    return block["stats"]["median_ns"] / 1e6 if block.get("valid") else None


def _f(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def accuracy(result: dict) -> str:
    acc = result.get("accuracy")
    if acc:
        top1 = acc.get("top1_agreement")
        return f"cos {acc['cosine']:.5f} top1 {_f(top1, '.2f')} {acc['verdict']}"
    return f"diff {result['max_abs_diff']:.1e}" if result.get("max_abs_diff") is not None else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=[str(REPO / "sample_models")])
    ap.add_argument("--precision", default="fp32,int8")
    ap.add_argument("--rounds", type=int, default=2, help="ABBA rounds per model")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()
    specs = discover(args.sources, precisions=parse_precisions(args.precision), runtimes=RUNTIMES)
    settings = BenchSettings(runs=args.runs, min_seconds=args.min_seconds, threads=args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        options = ConvertOptions(workers=args.workers, cache_dir=out / "cache")
        with Converter(options, log_dir=None, n_workers=options.worker_count(len(specs)), runtimes=RUNTIMES) as conv:
            results = {r["model"]: r for r in conv.convert_many(specs, out / "artifacts")}
        units: dict[tuple[str, str], dict[str, dict]] = {}
        for name, result in results.items():
            model, runtime, precision = parse_unit(name)
            units.setdefault((model, precision), {})[runtime] = result
        device = LocalDevice(prestart=False, runtimes=RUNTIMES)
        medians: dict[tuple[str, str], dict[str, float | None]] = {}
        try:
            for key, pair in sorted(units.items()):
                ok = [rt for rt in RUNTIMES if pair.get(rt, {}).get("ok")]
                rounds: dict[str, list[float]] = {rt: [] for rt in ok}
                for _ in range(args.rounds):
                    for rt in (*ok, *reversed(ok)):
                        median = measure(device, pair[rt], settings)
                        if median is not None:
                            rounds[rt].append(median)
                medians[key] = {rt: statistics.median(v) if v else None for rt, v in rounds.items()}
                print(f"  measured {key[0]} {key[1]}: " + ", ".join(f"{rt} {_f(m, '.4f')} ms"
                                                                    for rt, m in medians[key].items()), flush=True)
        finally:
            device.close()
    print(f"\n{'model':<18} {'prec':<5} {'LiteRT KB':>10} {'ET KB':>9} {'LiteRT ms':>10} {'ET ms':>9} {'ET/LiteRT':>9} "
          f"{'ET delegated':>12}  LiteRT accuracy | ET accuracy")
    for (model, precision), pair in sorted(units.items()):
        lt, et = pair.get("litert", {}), pair.get("executorch", {})
        m = medians.get((model, precision), {})
        ratio = m["executorch"] / m["litert"] if m.get("litert") and m.get("executorch") else None
        d = et.get("delegation") or {}
        delegated = f"{d['delegated_ops']}/{d['total_ops']}" if d.get("total_ops") else "-"
        size = (lambda r: _f(r["artifact_bytes"] / 1024, ".0f") if r.get("ok") else "FAILED")
        lt_acc = accuracy(lt) if lt.get("ok") else f"{lt.get('stage')}: {lt.get('cause')}"
        et_acc = accuracy(et) if et.get("ok") else f"{et.get('stage')}: {et.get('cause')}"
        print(f"{model:<18} {precision:<5} {size(lt):>10} {size(et):>9} {_f(m.get('litert'), '.4f'):>10} "
              f"{_f(m.get('executorch'), '.4f'):>9} {_f(ratio, '.2f'):>9} {delegated:>12}  {lt_acc} | {et_acc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
