#!/usr/bin/env python3
"""How much this host's speed drifts while nothing else runs: the noise floor under every latency figure.

    .venv/bin/python bench/host_drift.py [MODEL.tflite] [--seconds 60] [--runs 50] [--cpu 1]

One process pinned to one core times, window after window (about twice a second): the median of
--runs invokes of one model (default: sample_models' plain_cnn, converted through nnlite's cache) on
LiteRT's interpreter, one thread, and the median of as many 256x256 float32 matrix products in
numpy, a workload that shares nothing with LiteRT. Prints every window, then per workload: the
spread of the window medians (slowest / fastest), the share of windows within ±10% of the first
window's median and of the median window, and the same for the ratio model / matmul. A workload
that moves while nothing else runs shows the floor under any comparison of two measurements; a
ratio that moves as much shows that the two do not slow down alike, so that timing a reference
workload beside a model cannot correct the model's figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# One thread for numpy's matrix products too: both workloads run on the one pinned core.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def default_model(out_dir: str) -> str:
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.sources.discover import discover

    spec = discover([str(Path(__file__).resolve().parent.parent / "sample_models")], include=["plain_cnn"])[0]
    with Converter(ConvertOptions(), n_workers=1) as conv:
        result = conv.convert(spec, Path(out_dir) / "plain_cnn.tflite")
    if not result.get("ok"):
        sys.exit(f"could not convert plain_cnn: {result.get('error')}")
    return result["artifact_path"]


def within(values: list[float], ref: float, tol: float = 0.10) -> float:
    return sum(abs(v - ref) / ref <= tol for v in values) / len(values)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", help="a .tflite file (default: sample_models' plain_cnn)")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--runs", type=int, default=50, help="invokes (and matmuls) per window")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1 if (os.cpu_count() or 1) > 1 else 0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="nnlite-drift-") as tmp:
        path = args.model or default_model(tmp)
        os.sched_setaffinity(0, {args.cpu})
        import numpy as np
        from ai_edge_litert.interpreter import Interpreter

        it = Interpreter(model_path=path, num_threads=1)
        it.allocate_tensors()
        for d in it.get_input_details():
            it.set_tensor(d["index"], np.random.default_rng(0).standard_normal(d["shape"]).astype(d["dtype"]))
        a = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
        for _ in range(20):
            it.invoke()
            a @ a

        def window(fn) -> float:
            samples = []
            for _ in range(args.runs):
                t0 = time.perf_counter_ns()
                fn()
                samples.append(time.perf_counter_ns() - t0)
            return statistics.median(samples) / 1e6

        print(f"model {Path(path).name}, cpu {args.cpu}, {args.runs} runs per window, load average "
              f"{os.getloadavg()[0]:.1f}")
        print(f"{'t s':>6} {'model ms':>9} {'matmul ms':>10} {'ratio':>7}")
        model_ms, matmul_ms = [], []
        t_start = time.monotonic()
        while time.monotonic() - t_start < args.seconds:
            model_ms.append(window(it.invoke))
            matmul_ms.append(window(lambda: a @ a))
            print(f"{time.monotonic() - t_start:6.1f} {model_ms[-1]:9.4f} {matmul_ms[-1]:10.4f} "
                  f"{model_ms[-1] / matmul_ms[-1]:7.3f}", flush=True)
            time.sleep(0.3)

    ratio = [m / n for m, n in zip(model_ms, matmul_ms)]
    print(f"\n{len(model_ms)} windows over {args.seconds:.0f} s")
    for label, values in (("model", model_ms), ("matmul", matmul_ms), ("model / matmul", ratio)):
        mid = statistics.median(values)
        print(f"{label:<15} slowest / fastest window {max(values) / min(values):5.2f}x   within ±10% of the first "
              f"window {within(values, values[0]):6.1%}, of the median window {within(values, mid):6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
