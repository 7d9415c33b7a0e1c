#!/usr/bin/env python3
"""What the conversion worker's job costs beyond a bare conversion, model by model, in CPU seconds.

    .venv/bin/python bench/convert_overhead.py SOURCE [SOURCE...] [--limit N | --pick I,J,..] [--repeats 2]

In one process with 1 torch thread (as a worker runs), alternating per model: the naive script's
conversion (instantiate, `litert_torch.convert`, write the .tflite: bench/naive_reference.py) and the
worker's job (convert/worker/job.py convert_one: the same plus PyTorch references, the sampling check,
NHWC input, validation of the .tflite against PyTorch and its sha256), with the job's phases.
CPU seconds, not wall: on a shared machine wall time mostly measures the other users.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--pick", help="comma-separated indices into the discovered models")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()

    import torch

    from nnlite_tui.core.convert.worker import offline, torchvision_compat

    torch.set_num_threads(1)
    torchvision_compat.prepare()
    offline.enforce()
    import litert_torch

    from nnlite_tui.core.convert.phases import PhaseClock
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.sources.discover import discover

    specs = discover(args.sources, limit=args.limit)
    if args.pick:
        specs = [specs[int(i)] for i in args.pick.split(",")]
    runtime = get_runtime("litert")
    runtime.worker_start()
    tmp = Path(tempfile.mkdtemp())

    def naive(spec) -> None:
        loader = importlib.util.spec_from_file_location(f"naive_{abs(hash(spec.name))}", spec.file)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
        model = module.Net(spec.in_shape, spec.out_shape, spec.prm, torch.device("cpu")).eval()
        litert_torch.convert(model, (torch.randn(*spec.in_shape),)).export(str(tmp / "naive.tflite"))

    ratios = []
    total_naive = total_job = 0.0
    phase_cpu: dict[str, float] = {}
    for spec in specs:
        try:
            naive(spec)  # warm: the first conversion of a kind loads code the second does not
        except Exception as exc:  # noqa: BLE001  a model the bare converter cannot take is not compared
            print(f"skip {spec.name}: {type(exc).__name__}: {str(exc)[:80]}", flush=True)
            continue
        for _ in range(args.repeats):
            c = time.process_time()
            naive(spec)
            cpu_naive = time.process_time() - c
            c = time.process_time()
            clock = PhaseClock()
            result = convert_one(spec, str(tmp / "job.tflite"), runtime, clock=clock)
            cpu_job = time.process_time() - c
            result["phases"] = clock.to_dict()
            ratios.append(cpu_job / cpu_naive)
            total_naive += cpu_naive
            total_job += cpu_job
            for name, cost in result["phases"].items():
                phase_cpu[name] = phase_cpu.get(name, 0.0) + cost["cpu_s"]
            print(f"{spec.name[:36]:36} {result['artifact_bytes'] / 2**20:7.1f} MB  naive {cpu_naive:6.2f} s  "
                  f"job {cpu_job:6.2f} s  ({cpu_job / cpu_naive:4.2f}x)  " +
                  " ".join(f"{k} {v['cpu_s']:.2f}" for k, v in result["phases"].items()), flush=True)
    if ratios:
        print(f"CPU: naive {total_naive:.1f} s, job {total_job:.1f} s, total {total_job / total_naive:.2f}x, "
              f"median per model {statistics.median(ratios):.2f}x")
        share = sum(phase_cpu.values()) or 1.0
        print("job CPU by phase: " + ", ".join(f"{k} {100 * v / share:.0f}%" for k, v in
                                               sorted(phase_cpu.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
