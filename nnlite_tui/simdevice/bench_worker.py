"""The simulated app's process: one launch of org.nnlite.bench, as the app's BenchRunner does it.

Reads a job (one JSON line on stdin: the intent extras and the device facts), parses the extras
like the app, runs `core.bench.benchmark_result` on the sandboxed model with the real LiteRT
interpreter, and writes the protocol report to `<report>.tmp`, fsync, rename. Prints its logcat
lines (`<level> <message>`, android-app/PROTOCOL.md section 8) for the simulator to log.

With the `profile_ops` extra, a per-op profile from the host's profiler follows the timed runs (an
`ops` block, as the host device writes it).

Conditions (thermal status, headroom, battery, screen) are the simulated device's: the worker asks
for them with a `? conditions` line before and after the benchmark and reads the answer from
stdin; the report marks them `source: simulated`. Timing, memory and delegation are measured on
the host's real interpreter and process, and marked `source: host` where that matters.
"""

from __future__ import annotations

import json
import os
import sys
import time

from nnlite_tui.simdevice.bench_args import ARGS_ERROR_TYPE, ArgsError, BenchRequest, JavaLong, parse

V2_REPORT_KEYS = ("warmup_seconds", "require_full_delegation", "timing", "native_stats", "native_samples_ns",
                  "warmup_runs", "warmup_mean_ns", "delegation", "memory", "conditions", "input_fill")
SETTINGS_KEYS = ("threads", "warmup", "warmup_seconds", "runs", "min_seconds", "seed", "require_full_delegation")

# The delegate a simulated device lacks, in the words the app's LiteRtEngine uses on a real one.
UNAVAILABLE = {
    "gpu": "GPU delegate not supported on this device (simulated device: host CPU only)",
    "nnapi": "NNAPI delegate has no accelerator driver (simulated device: host CPU only)",
}
DELEGATE_ERROR = "org.nnlite.bench.DelegateUnavailableException"


PROTOCOL_VERSION = 2
NO_OPS_PROFILE_REASON = "LiteRT's Android Interpreter API has no per-op profiler; the report has no ops block"
THROTTLING_STATUS = 1  # PowerManager.THERMAL_STATUS_LIGHT
THROTTLING_HEADROOM = 1.0  # getThermalHeadroom at THERMAL_STATUS_SEVERE


def log(level: str, message: str) -> None:
    print(f"{level} {message}", flush=True)


def ask_conditions() -> dict:
    """The simulated device's conditions now (the app's DeviceProbe.conditions())."""
    print("? conditions", flush=True)
    return json.loads(sys.stdin.readline())


def throttled(snapshots: list[dict]) -> bool | None:
    """As the app's Conditions.throttled: any status LIGHT or worse, or headroom >= 1.0; None if
    nothing thermal was read."""
    statuses = [s["thermal_status"] for s in snapshots if s.get("thermal_status") is not None]
    headrooms = [s["thermal_headroom"] for s in snapshots if s.get("thermal_headroom") is not None]
    if any(x >= THROTTLING_STATUS for x in statuses) or any(h >= THROTTLING_HEADROOM for h in headrooms):
        return True
    return False if statuses or headrooms else None


def conditions_block(before: dict, after: dict | None) -> dict:
    # Emulators do not support sustained-performance mode; the simulated app records that it asked.
    return {"source": "simulated", "before": before, "after": after,
            "throttled": throttled([s for s in (before, after) if s is not None]),
            "sustained_performance": {"supported": False, "enabled": False}}


def _envelope(job: dict, report: dict, fallback: str | None) -> dict:
    report["fallback_reason"] = fallback
    if job.get("protocol", PROTOCOL_VERSION) < 2:  # the previous app release wrote none of these
        for key in V2_REPORT_KEYS:
            report.pop(key, None)
    report.update({"protocol_version": job.get("protocol", PROTOCOL_VERSION), "app_version": job["app_version"], "simulated": True,
                   "started_at_ms": job["started_at_ms"], "finished_at_ms": int(time.time() * 1000),
                   "device": job["device"]})
    head = ("protocol_version", "app_version", "simulated", "valid", "error_stage", "error_type", "error_message")
    return {**{k: report[k] for k in head}, **{k: v for k, v in report.items() if k not in head}}


def args_report(job: dict, err: ArgsError) -> dict:
    v = err.values
    report = {"valid": False, "error_stage": "args", "error_type": ARGS_ERROR_TYPE, "error_message": str(err),
              "run_id": v["run_id"], "model_path": v["model_path"], "backend_requested": v["backend"],
              "backend_used": None, **{k: v[k] for k in SETTINGS_KEYS}}
    return _envelope(job, report, None)


def bench_report(job: dict, req: BenchRequest) -> dict:
    from nnlite_tui.core.bench import BenchSettings, benchmark_result

    s = req.settings
    requested = s["backend"]
    ran = requested if requested in ("cpu", "xnnpack") else "xnnpack"
    fallback = (f"{requested} -> xnnpack: load failed: {DELEGATE_ERROR}: {UNAVAILABLE[requested]}"
                if ran != requested else None)
    settings = BenchSettings(warmup=s["warmup"], runs=s["runs"], min_seconds=s["min_seconds"], max_runs=s["max_runs"],
                             max_seconds=s["max_seconds"], threads=s["threads"], backend=ran, seed=s["seed"],
                             warmup_seconds=s["warmup_seconds"], require_full_delegation=s["require_full_delegation"])
    before = ask_conditions()
    result = benchmark_result(job["model_host"], settings, req.run_id, fill=faulty_fill(job.get("input_fault")))
    if result["valid"]:
        result["conditions"] = conditions_block(before, ask_conditions())
        if req.profile_ops and job.get("app_ops", "host") == "host":
            result.update(ops_blocks(job, req, settings))
    result.update(model_path=req.model_path, backend_requested=requested, backend_used=ran)
    if result.get("error_message"):
        result["error_message"] = result["error_message"].replace(job["model_host"], req.model_path)
    if not result["valid"]:
        log("E", f"ERROR stage={result['error_stage']} type={result['error_type']} message={result['error_message']}")
    return _envelope(job, result, fallback)


def faulty_fill(fault: dict | None):
    """The input filler of an app that misapplies quantization (fault input_scale/input_zero_point):
    it quantizes with the wrong parameters but, like a real bug would, reports the model's."""
    if not fault:
        return None
    from nnlite_tui.core.bench import make_input

    def fill(shape, dtype, seed, quantization):
        if quantization is not None and float(quantization[0]) > 0.0:
            quantization = (float(quantization[0]) * fault["scale"], int(quantization[1]) + fault["zero_point"])
        return make_input(shape, dtype, seed, quantization)

    return fill


def ops_blocks(job: dict, req: BenchRequest, settings) -> dict:
    """The per-op profile the host asked for (PROTOCOL.md section 9e), after the timed runs: the host's
    own profiler on the host's interpreter, as for the host device; the model's path is the device's."""
    from dataclasses import replace

    from nnlite_tui.core.predict.profiled_pass import profiled_pass

    blocks = profiled_pass(job["model_host"], replace(settings, profile_ops=req.profile_ops,
                                                      profile_runs=req.profile_runs))
    for block in blocks.values():
        if block.get("error"):
            block["error"] = block["error"].replace(job["model_host"], req.model_path)
    return blocks


def internal_report(job: dict, req: BenchRequest, exc: Exception) -> dict:
    s = req.settings
    report = {"valid": False, "error_stage": "internal", "error_type": f"{type(exc).__module__}.{type(exc).__name__}",
              "error_message": (str(exc).strip().splitlines() or [type(exc).__name__])[0], "run_id": req.run_id,
              "model_path": req.model_path, "backend_requested": s["backend"], "backend_used": None,
              **{k: s[k] for k in SETTINGS_KEYS}}
    return _envelope(job, report, None)


def write_report(path: str, report: dict, truncate: bool) -> None:
    data = (json.dumps(report, indent=1) + "\n").encode()
    os.makedirs(os.path.dirname(path), exist_ok=True)  # the app creates missing parents
    if truncate:  # fault injection: what a broken writer would leave
        with open(path, "wb") as fh:
            fh.write(data[: len(data) // 2])
        return
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def run(job: dict) -> None:
    extras = {k: JavaLong(v[1]) if isinstance(v, list) else v for k, v in job["extras"].items()}  # --el
    try:
        req = parse(extras, job.get("protocol", PROTOCOL_VERSION), profile_extras=job.get("app_ops") != "unknown")
    except ArgsError as err:
        log("E", f"ERROR stage=args type={ARGS_ERROR_TYPE} message={err}")
        if err.report_path is None:
            log("E", "no report written: report_path missing")
            return
        report, report_path = args_report(job, err), err.report_path
    else:
        s = req.settings
        log("I", f"START run_id={req.run_id} model={req.model_path} backend={s['backend']} threads={s['threads']} "
                 f"warmup={s['warmup']} runs={s['runs']}")
        report_path = req.report_path
        if req.profile_ops and job.get("app_ops", "host") == "none":  # as the Android app (BenchRunner)
            log("I", f"NO_OPS_PROFILE profile_ops={req.profile_ops}: {NO_OPS_PROFILE_REASON}")
        try:
            report = bench_report(job, req)
        except Exception as exc:  # the protocol's "internal" stage: a report that says so, not silence
            log("E", f"ERROR stage=internal type={type(exc).__module__}.{type(exc).__name__} message={exc} "
                     f"report={report_path}")
            report = internal_report(job, req, exc)
    if not job["report_writable"]:
        log("E", f"REPORT_WRITE_FAILED report={report_path} type=java.io.FileNotFoundException "
                 f"message={report_path}: open failed: EACCES (Permission denied)")
        return
    write_report(job["report_host"], report, job["truncate"])
    log("I", f"RESULT run_id={report['run_id']} valid={str(report['valid']).lower()} "
             f"backend_used={report['backend_used']} report={report_path}")


if __name__ == "__main__":
    # Import what every benchmark needs before the job arrives: the app keeps one such process
    # waiting, so a launch does not pay for the imports.
    import numpy  # noqa: F401
    from ai_edge_litert.interpreter import Interpreter  # noqa: F401

    job_line = sys.stdin.readline()
    if job_line.strip():  # no job: the spare process was let go
        run(json.loads(job_line))
