#!/usr/bin/env python3
"""Does the host benchmark's sandbox move its timings? Medians with and without it, in ABBA order.

    .venv/bin/python bench/host_sandbox_timing.py MODEL.tflite [MODEL.tflite ...] [--rounds 2] [--runs 50]
                                                  [--min-seconds 2]

Each model is timed by the pipeline's own host device (LocalDevice: one fresh benchmark process per
model) alternately without the sandbox (NNLITE_BENCH_SANDBOX=0) and in it, in the order off, on, on,
off per round, so that the machine's drift weighs on both sides alike. Per model: the mean of the
"on" medians against the mean of the "off" medians, and the spread of the two "off" medians of a
round (the noise floor on the machine at hand). Namespaces, a seccomp filter and cgroup accounting
add no work to the timed loop, so the difference should stay within that noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.bench.settings import BenchSettings  # noqa: E402
from nnlite_tui.core.devices.host_sandbox import ENV_SWITCH  # noqa: E402
from nnlite_tui.core.devices.local import LocalDevice  # noqa: E402
from nnlite_tui.core.outcomes import Artifact  # noqa: E402


def median_ms(model: str, sandboxed: bool, settings: BenchSettings) -> float:
    os.environ[ENV_SWITCH] = "1" if sandboxed else "0"
    device = LocalDevice(prestart=False, timeout_s=300)
    try:
        result = device.benchmark(Artifact(model), settings, "host-sandbox-timing")
    finally:
        device.close()
    if not result.get("valid"):
        raise SystemExit(f"{model}: the benchmark failed ({result.get('error_message')})")
    return result["stats"]["median_ns"] / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--min-seconds", type=float, default=2.0)
    args = parser.parse_args()
    settings = BenchSettings(warmup=5, runs=args.runs, min_seconds=args.min_seconds, max_seconds=60)
    print(f"{'model':<48} {'off ms':>9} {'on ms':>9} {'on/off':>8} {'off spread':>11}")
    ratios = []
    for model in args.models:
        off, on, spread = [], [], []
        for _ in range(args.rounds):
            a = median_ms(model, False, settings)
            on += [median_ms(model, True, settings), median_ms(model, True, settings)]
            b = median_ms(model, False, settings)
            off += [a, b]
            spread.append(abs(a - b) / min(a, b))
        ratio = statistics.mean(on) / statistics.mean(off)
        ratios.append(ratio)
        print(f"{Path(model).stem[:48]:<48} {statistics.mean(off):>9.3f} {statistics.mean(on):>9.3f} "
              f"{ratio:>8.3f} {max(spread):>10.1%}")
    print(f"geometric mean on/off: {statistics.geometric_mean(ratios):.3f} over {len(ratios)} model(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
