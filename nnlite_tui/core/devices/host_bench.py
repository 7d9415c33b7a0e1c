"""Runs one host benchmark in a fresh process: `python -m nnlite_tui.core.devices.host_bench ARGS.json`.

A crash of the LiteRT interpreter (a segfault on a bad model) then kills only this process.
ARGS.json holds model_path, settings, run_id, cpus and the path to write the result to.
"""

from __future__ import annotations

import json
import os
import sys


def main(args_path: str) -> int:
    with open(args_path) as f:
        args = json.load(f)
    cpus = args.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    from nnlite_tui.core.bench import BenchSettings, benchmark_result

    result = benchmark_result(args["model_path"], BenchSettings(**args["settings"]), args.get("run_id", ""))
    result["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    tmp = args["result_path"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args["result_path"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
