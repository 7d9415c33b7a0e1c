"""Runs one host benchmark in a fresh process: `python -m nnlite_tui.core.devices.host_bench --serve [--cpus 0,1]`.

A crash of the LiteRT interpreter (a segfault on a bad model) then kills only this process.
It pins itself, imports the runtime (numpy, LiteRT, the protocol), prints READY and waits for one
line on stdin, the path of ARGS.json (model_path, settings, run_id, cpus and the path to write the
result to); it then benchmarks that one model and exits. The parent starts it while conversions
still run, so a host benchmark pauses them only for the load and the timing; each model still gets
a fresh process. End of input before a path (the parent closed it or died) ends it.
"""

from __future__ import annotations

import gc
import json
import os
import sys

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
    with open(args_path) as f:
        args = json.load(f)
    cpus = args.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    from nnlite_tui.core.bench import BenchSettings, benchmark_result

    settings = BenchSettings(**args["settings"])
    result = benchmark_result(args["model_path"], settings, args.get("run_id", ""), profile=False)
    result["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    result["huge_pages"] = {"glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "thp_enabled": thp_mode()}
    _write(args["result_path"], result)
    if settings.profile_ops and result.get("valid"):
        # The timings are saved first: if LiteRT's C API takes this process down during the profiled
        # pass, the parent still gets them (local.py marks the ops block as crashed).
        from nnlite_tui.core.predict.profiled_pass import profiled_pass

        result.update(profiled_pass(args["model_path"], settings))
        _write(args["result_path"], result)
    return 0


def _write(path: str, result: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, path)


def serve(cpus: str | None) -> int:
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})  # before any import starts a thread
    import numpy  # noqa: F401 - imported now, while nothing is being timed
    from ai_edge_litert import interpreter  # noqa: F401

    from nnlite_tui.core import bench, stats, tensor_quant  # noqa: F401

    bench.memory_snapshot()  # looks up glibc's mallinfo2 (an ldconfig run) now rather than in the pause
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


if __name__ == "__main__":
    sys.exit(serve(sys.argv[3] if sys.argv[2:3] == ["--cpus"] else None))
