"""The torchvision zoo: convert and validate every classification architecture torchvision ships
(random weights, 1x3x224x224) through nnlite's own conversion workers, and print per model whether
it is valid or the cause it failed with, the compute check's ratio (the artifact's multiply-accumulate
FLOPs over PyTorch's) and its verdict, and how many tensors the dense-weights rule re-drew; then the
totals, and every valid model whose ratio is below the threshold (there should be none).

    python bench/zoo_coverage.py [--only resnet18,vit_b_16] [--limit N] [--workers 2] [--timeout 600]
                                 [--weights dense|as-built] [--json out.json]

--limit N takes N architectures spread over the sorted list. The models are factories in a generated
file (one per builder, `torchvision.models.<name>(weights=None)`), converted as `file.py:factory`
sources are by `nnlite convert`: in the sandbox, cold cache, each with the worker's time limit and
memory cap. The largest (efficientnet_v2_l, regnet_y_128gf, vit_h_14) need minutes each.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite_tui.core.convert.causes import classify  # noqa: E402
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402

from bench.lemur_coverage import spread  # noqa: E402  (the same even spread over a name order)

FACTORY = '''

def {name}():
    return torchvision.models.{name}(weights=None), torch.randn(1, 3, 224, 224)
'''


def classification_models() -> list[str]:
    from nnlite_tui.core.convert.worker import torchvision_compat

    torchvision_compat.prepare()  # torchvision imports even where its compiled operators do not load
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated builder names")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--weights", choices=("dense", "as-built"), default="dense")
    ap.add_argument("--json", type=Path, help="write every result here")
    args = ap.parse_args()

    names = [n for n in args.only.split(",") if n] or spread(classification_models(), args.limit)
    work = Path(tempfile.mkdtemp(prefix="zoo-coverage-"))
    source = work / "zoo.py"
    source.write_text("import torch\nimport torchvision\n" + "".join(FACTORY.format(name=n) for n in names))
    specs = discover([f"{source}:{n}" for n in names])
    opts = ConvertOptions(timeout_s=args.timeout, workers=args.workers, cache_dir=work / "cache",
                          use_cache=False, weights=args.weights, sandbox_sources=(str(work),))
    print(f"{len(specs)} torchvision classifiers at 1x3x224x224, weights {args.weights}, {args.workers} "
          f"workers, memory cap {opts.cap_mb()} MB per worker", flush=True)
    t0 = time.monotonic()

    def show(spec, r):
        check = r.get("compute_check") or {}
        ratio = check.get("ratio")
        redrawn = (r.get("weights") or {}).get("redrawn")
        detail = "" if r.get("ok") else f" [{r.get('stage')}] {str(r.get('error_message'))[:150]}"
        print(f"  {classify(r):20} {spec.name:28} ratio {'-' if ratio is None else f'{ratio:.4f}':>6} "
              f"({check.get('verdict') or '-'}), re-drawn {redrawn if redrawn is not None else '-'}, "
              f"{r.get('seconds', 0):.0f}s{detail}", flush=True)

    with Converter(opts, log_dir=work, n_workers=args.workers) as conv:
        results = conv.convert_many(specs, work, work, on_result=show)
    wall = time.monotonic() - t0
    valid = [r for r in results if r.get("ok")]
    low = [r["model"] for r in valid if ((r.get("compute_check") or {}).get("verdict") or "") == "less-work"
           or ((r.get("compute_check") or {}).get("ratio") or 1.0) < 0.8]
    causes = collections.Counter(classify(r) for r in results if not r.get("ok"))
    unmeasured = [r["model"] for r in valid if (r.get("compute_check") or {}).get("ratio") is None]
    print(f"\n{len(valid)} of {len(results)} valid in {wall / 60:.1f} min; failed by cause: {dict(causes)}")
    print(f"valid with a compute ratio below 0.8: {low or 'none'}; compute not measured: {unmeasured or 'none'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
