"""LEMUR coverage: convert and validate every model of a LEMUR tree, then count valid/failed by runtime,
task and cause.

A model is valid when its artifact (.tflite, .pte) loads in its runtime and matches PyTorch eager on
two inputs (the conversion worker's own check). Failures are grouped by cause (convert/causes.py),
each with an example message naming its stage.

    python bench/lemur_coverage.py ../shared/lemur-mini [--runtime litert|executorch|all] [--limit N]
                                   [--workers 2] [--sandbox auto|require|off] [--json out.json]

--sandbox off converts the same models outside the sandbox (the valid counts should not differ).

--limit N takes N models spread evenly over the tree's name order (so every family is represented),
not the first N.
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

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.causes import classify  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


def spread(items: list, n: int | None) -> list:
    if n is None or n >= len(items):
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--limit", type=int, help="N models spread over the tree")
    ap.add_argument("--include", action="append", default=[], help="name glob (repeatable)")
    ap.add_argument("--runtime", default="litert", help="litert, executorch, or all (comma-separated)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sandbox", choices=("auto", "require", "off"), default="auto",
                    help="where model code runs (as nnlite run's --require-sandbox / --no-sandbox)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--mem-cap-mb", type=int, default=0, help="0: from available memory")
    ap.add_argument("--cache-dir", type=Path, help="default: a fresh temporary folder (cold)")
    ap.add_argument("--json", type=Path, help="write every result here")
    ap.add_argument("--keep", action="store_true", help="keep the .tflite files and logs (about 100 MB a model)")
    args = ap.parse_args()

    from nnlite_tui.core.convert.sandbox.sources import source_roots
    from nnlite_tui.core.runtimes import parse_runtimes

    runtimes = parse_runtimes(args.runtime)
    models = spread(discover([args.tree], include=args.include), args.limit)
    specs = discover([args.tree], include=[m.name for m in models], runtimes=runtimes) if runtimes != ("litert",) \
        else models
    work = Path(tempfile.mkdtemp(prefix="lemur-coverage-"))
    roots = source_roots(specs)  # what the sandbox shows its model code, as nnlite run does
    opts = ConvertOptions(timeout_s=args.timeout, mem_cap_mb=args.mem_cap_mb, workers=args.workers,
                          cache_dir=args.cache_dir or work / "cache", sandbox=args.sandbox,
                          sandbox_sources=tuple(str(p) for p in roots.read_only),
                          sandbox_python_path=tuple(str(p) for p in roots.python_path))
    tasks = {s.name: s.task or "img-classification" for s in specs}
    runtime_of = {s.name: s.runtime for s in specs}
    print(f"{len(models)} models x {len(runtimes)} runtime(s) ({', '.join(runtimes)}) from {args.tree}, "
          f"{args.workers} workers, sandbox {args.sandbox}, "
          f"memory cap {opts.cap_mb()} MB per worker, output in {work}", flush=True)
    t0 = time.monotonic()

    def show(spec, r):
        cause = classify(r)
        detail = "" if r.get("ok") else f" [{r.get('stage')}] {str(r.get('error_message'))[:150]}"
        print(f"  {cause:22} {spec.name} {list(spec.in_shape)} {r.get('seconds', 0):.1f}s{detail}", flush=True)

    with Converter(opts, log_dir=work, n_workers=args.workers, runtimes=runtimes) as conv:
        results = conv.convert_many(specs, work, work, on_result=show)
    wall = time.monotonic() - t0

    print(f"\n{len(results)} units in {wall / 60:.1f} min ({len(results) / wall * 3600:.0f} units/hour)")
    where = collections.Counter(str((r.get("sandbox") or {}).get("mechanism"))
                                for r in results)
    print(f"model code ran in: {dict(where)}")
    for runtime in runtimes:
        mine = [r for r in results if runtime_of[r["model"]] == runtime]
        by_task: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        by_cause: collections.Counter = collections.Counter()
        example: dict[str, str] = {}
        for r in mine:
            cause = classify(r)
            by_task[tasks[r["model"]]]["valid" if r.get("ok") else "failed"] += 1
            if not r.get("ok"):
                by_cause[(r.get("stage"), cause)] += 1
                example.setdefault(cause, f"{r['model']}: {str(r.get('error_message'))[:200]}")
        valid = sum(1 for r in mine if r.get("ok"))
        print(f"{runtime}: valid {valid} / {len(mine)} ({100 * valid / max(len(mine), 1):.1f}%), "
              f"failed {len(mine) - valid}")
        print("  by task:")
        for task, c in sorted(by_task.items()):
            total = c["valid"] + c["failed"]
            print(f"    {task:22} valid {c['valid']:3} / {total:3} ({100 * c['valid'] / total:.1f}%), "
                  f"failed {c['failed']}")
        print("  failed by stage and cause:")
        for (stage, cause), n in by_cause.most_common():
            print(f"    {str(stage) + ': ' + cause:32} {n:3}  e.g. {example[cause]}")
    retried = [r["model"] for r in results if r.get("input_size_retry")]
    if retried:
        print(f"retried at the next recorded size: {len(retried)} ({', '.join(retried)})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
