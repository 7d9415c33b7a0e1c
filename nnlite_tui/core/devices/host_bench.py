"""Runs one host benchmark in a fresh process:
`python -m nnlite_tui.core.devices.host_bench --serve [--cpus 0,1] [--runtimes litert,...]`.

A crash of the runtime's interpreter (a segfault on a bad model) then kills only this process.
It pins itself, imports the runtimes it may be handed (numpy, their interpreters, the protocol),
prints READY and waits for one line on stdin, the path of ARGS.json (model_path, runtime, settings,
run_id, cpus and the path to write the result to); it then benchmarks that one model and exits. The parent starts it while conversions
still run, so a host benchmark pauses them only for the load and the timing; each model still gets
a fresh process. End of input before a path (the parent closed it or died) ends it.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys
import time
from collections.abc import Mapping

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

READY = "nnlite-host-bench-ready"


def thp_mode() -> str | None:
    """The kernel's transparent-huge-page mode, the bracketed word of its sysfs file."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return None  # no THP support, or not Linux
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else None


def run_one(args_path: str) -> int:
    began = time.perf_counter()
    with open(args_path) as f:
        args = json.load(f)
    cpus = args.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    from nnlite_tui.core.bench.protocol import benchmark_result
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.progress import phase_line
    from nnlite_tui.core.runtimes import get_runtime

    def progress(phase: str, **figures: float) -> None:  # to the parent, which forwards it to the console
        print(phase_line(phase, time.perf_counter() - began, **figures), flush=True)

    settings = BenchSettings(**args["settings"])
    runtime = args.get("runtime") or DEFAULT_RUNTIME
    energy_windows, no_energy = None, None
    if settings.energy:  # only from a readable RAPL counter (host_energy.py); else a block saying why
        from pathlib import Path

        from nnlite_tui.core.devices import host_energy

        root = Path(args.get("powercap_root") or host_energy.POWERCAP_ROOT)
        energy_windows, no_energy = host_energy.windows_or_reason(settings.energy_seconds, root)
    result = benchmark_result(args["model_path"], settings, args.get("run_id", ""), profile=False, runtime=runtime,
                              progress=progress, after_timed=energy_windows, ranges=args.get("input_ranges") or ())
    if no_energy is not None and result.get("valid"):
        result["energy"] = no_energy
    result["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    result["huge_pages"] = {"glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "thp_enabled": thp_mode()}
    _write(args["result_path"], result)
    if settings.profile_ops and result.get("valid"):
        # The timings are saved first: if the runtime's profiler takes this process down during the
        # profiled pass, the parent still gets them (local.py marks the ops block as crashed).
        result.update(get_runtime(runtime).profile(args["model_path"], settings, args.get("input_ranges") or ()))
        _write(args["result_path"], result)
    return 0


def _write(path: str, result: Mapping[str, object]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, path)


def serve(cpus: str | None, runtimes: tuple[str, ...]) -> int:
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})  # before any import starts a thread
    from nnlite_tui.core.bench import input_fill, memory, protocol, tensor_quant  # noqa: F401 - now, untimed
    from nnlite_tui.core.runtimes import get_runtime

    for name in runtimes:
        for module in get_runtime(name).bench_imports:
            importlib.import_module(module)
    memory.memory_snapshot()  # looks up glibc's mallinfo2 (an ldconfig run) now rather than in the pause
    print(READY, flush=True)
    line = sys.stdin.readline().strip()
    if not line:
        return 0  # not needed after all
    code = run_one(line)
    # The interpreter is gone (freed when the benchmark returned; collected here if a cycle held it),
    # so a crash in its teardown still shows as this process dying. What is left is the unwinding of
    # Python and its libraries, tens of ms during which the parent would hold conversions back.
    gc.collect()
    sys.stdout.flush()
    os._exit(code)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="host_bench")
    parser.add_argument("--serve", action="store_true", required=True)
    parser.add_argument("--cpus")
    parser.add_argument("--runtimes", default=DEFAULT_RUNTIME)
    args = parser.parse_args(argv)
    return serve(args.cpus, tuple(args.runtimes.split(",")))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
