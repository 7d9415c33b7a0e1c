"""The simulated app's process: read a job (JSON on stdin), benchmark, write the report.

Runs `core.bench.benchmark_result` on the sandboxed model with the real LiteRT interpreter and
writes the protocol's report: temp file + rename, so a report is either absent or whole (unless
the `truncate` fault asks for a cut one). Prints one log line per step for the sim's logcat.
"""

from __future__ import annotations

import json
import os
import sys
import time

FALLBACK_BACKENDS = ("gpu", "nnapi")


def build_report(job: dict) -> dict:
    from nnlite_tui.core.bench import BenchSettings, benchmark_result

    started = int(time.time() * 1000)
    s = dict(job["settings"])
    requested = str(s.get("backend", "xnnpack"))
    fallback = None
    if requested in FALLBACK_BACKENDS:
        fallback = (f"{requested} delegate is not available on the simulated device (host CPU); "
                    "ran on xnnpack instead")
        s["backend"] = "xnnpack"
    try:
        settings = BenchSettings(warmup=int(s["warmup"]), runs=int(s["runs"]), min_seconds=float(s["min_seconds"]),
                                 max_runs=int(s["max_runs"]), max_seconds=float(s["max_seconds"]),
                                 threads=int(s["threads"]), backend=str(s["backend"]), seed=int(s["seed"]))
    except (TypeError, ValueError) as exc:
        result = {"valid": False, "error_stage": "arguments", "error_type": f"builtins.{type(exc).__name__}",
                  "error_message": str(exc), "run_id": job["run_id"], "model_path": job["model_device"],
                  "backend_requested": requested, "backend_used": None}
    else:
        result = benchmark_result(job["model_host"], settings, job["run_id"])
        result["model_path"] = job["model_device"]
        result["backend_requested"] = requested
        if result.get("error_message"):
            result["error_message"] = result["error_message"].replace(job["model_host"], job["model_device"])
    if fallback:
        result["backend_used"] = "xnnpack"
        result["fallback_reason"] = fallback
    result.setdefault("fallback_reason", None)
    result.update({"protocol_version": 1, "app_version": job["app_version"], "simulated": True,
                   "started_at_ms": started, "finished_at_ms": int(time.time() * 1000), "device": job["device"]})
    return result


def write_report(path: str, report: dict, truncate: bool) -> None:
    data = json.dumps(report, indent=1).encode()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if truncate:
        with open(path, "wb") as fh:
            fh.write(data[: len(data) // 2])
        return
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def main() -> int:
    job = json.loads(sys.stdin.read())
    report = build_report(job)
    print(f"benchmark {'ok' if report['valid'] else 'failed'} run_id={job['run_id']} "
          f"mean_ns={report.get('stats', {}).get('mean_ns')}", flush=True)
    write_report(job["report_host"], report, job["truncate"])
    print(f"report written to {job['report_device']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
