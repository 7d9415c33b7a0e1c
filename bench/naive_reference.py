#!/usr/bin/env python3
"""The naive sequential reference: one process, for each model instantiate, convert, export, load,
warm up and time the runs — the shape of the NN Lite pipeline without its emulator.

It exports under nnlite's exact rewrites (core/convert/worker/export_fixes.py: adaptive max pooling, bilinear, rank-4
linear), so that both sides of a comparison convert the same models; `--no-rewrites` converts the
plain way, which fails on those ops.

    python bench/naive_reference.py OUT_DIR --runs 50 --min-seconds 1 --warmup 5 [--warmup-seconds 0.5]
                                    [--include GLOB]... [--limit N] [--no-rewrites] SOURCE...

With `--adb SERIAL [--apk APK]`, each converted model is benchmarked on that adb device instead,
through the same device code nnlite uses, one model after the other (push, launch, poll, pull).
Prints one line per model (its median, conversion seconds and benchmark seconds) and the wall time.
Used by pipeline_vs_naive.py.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")


def main() -> int:
    t_start = time.monotonic()
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--warmup-seconds", type=float, default=0.0, help="warm up for at least this long too")
    ap.add_argument("--include", action="append", default=[], help="only models matching this glob")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--adb", help="benchmark on this adb serial instead of in-process")
    ap.add_argument("--apk")
    ap.add_argument("--no-rewrites", action="store_true", help="export without nnlite's exact rewrites")
    args = ap.parse_args()

    import litert_torch
    import numpy as np
    import torch
    from ai_edge_litert.interpreter import Interpreter

    from nnlite_tui.core.convert.worker.export_fixes import exact_rewrites
    from nnlite_tui.core.outcomes import Artifact
    from nnlite_tui.core.sources.discover import discover

    torch.set_num_threads(1)
    device = None
    if args.adb:
        from nnlite_tui.core.bench.settings import BenchSettings
        from nnlite_tui.core.devices.adb import AdbDevice
        from nnlite_tui.core.events import RecordingReporter

        device = AdbDevice(args.adb, apk=args.apk)
        device.prepare(RecordingReporter())
        settings = BenchSettings(warmup=args.warmup, runs=args.runs, min_seconds=args.min_seconds,
                                 warmup_seconds=args.warmup_seconds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ok = failed = 0
    for spec in discover(args.sources, include=args.include, limit=args.limit):
        t_model = time.monotonic()
        try:
            mod_spec = importlib.util.spec_from_file_location(f"naive_{ok + failed}", spec.file)
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
            model = module.Net(spec.in_shape, spec.out_shape, spec.prm, torch.device("cpu")).eval()
            x = torch.randn(*spec.in_shape)
            path = out / f"{spec.name}.tflite"
            with contextlib.nullcontext() if args.no_rewrites else exact_rewrites():
                edge = litert_torch.convert(model, (x,))
            edge.export(str(path))
            t_bench = time.monotonic()
            if device is not None:
                result = device.benchmark(Artifact(str(path)), settings, "naive")
                if not result.get("valid"):
                    raise RuntimeError(result.get("error_message"))
                ok += 1
                print(f"ok     {spec.name} median {result['stats']['median_ns'] / 1e6:.3f} ms "
                      f"{_seconds(t_model, t_bench)}", flush=True)
                continue
            it = Interpreter(model_path=str(path), num_threads=1)
            it.allocate_tensors()
            d = it.get_input_details()[0]
            it.set_tensor(d["index"], np.random.default_rng(0).standard_normal(d["shape"]).astype(np.float32))
            warm, warm_ns = 0, 0
            while warm < args.warmup or warm_ns < args.warmup_seconds * 1e9:
                t0 = time.perf_counter_ns()
                it.invoke()
                warm_ns += time.perf_counter_ns() - t0
                warm += 1
            samples, total = [], 0
            while len(samples) < args.runs or total < args.min_seconds * 1e9:
                t0 = time.perf_counter_ns()
                it.invoke()
                dt = time.perf_counter_ns() - t0
                samples.append(dt)
                total += dt
                if len(samples) >= 10000 or total >= 60e9:
                    break
            ok += 1
            print(f"ok     {spec.name} median {sorted(samples)[len(samples) // 2] / 1e6:.3f} ms "
                  f"{_seconds(t_model, t_bench)}", flush=True)
        except Exception as exc:  # the reference records a failure and goes on, as NN Lite did
            failed += 1
            print(f"failed {spec.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}",
                  flush=True)
    print(f"naive: {ok} ok, {failed} failed, wall {time.monotonic() - t_start:.1f} s")
    return 0


def _seconds(t_model: float, t_bench: float) -> str:
    """What pipeline_vs_naive.py reads: this model's conversion (import to export) and benchmark seconds."""
    return f"convert {t_bench - t_model:.3f} s bench {time.monotonic() - t_bench:.3f} s"


if __name__ == "__main__":
    sys.exit(main())
