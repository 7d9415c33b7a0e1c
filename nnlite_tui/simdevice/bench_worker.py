"""The simulated app's process: one launch of org.nnlite.bench, as the app's BenchRunner does it.

Reads a job (one JSON line on stdin: the intent extras and the device facts), parses the extras
like the app, runs `core.bench.benchmark_result` on the sandboxed model with the real runtime (LiteRT's
interpreter, or ExecuTorch's runtime fed the input shapes and dtypes the host sent, as the app's
ExecuTorch engine is), and writes the protocol report to `<report>.tmp`, fsync, rename. As the
current app (protocol 3) it announces its capabilities in every report: the runtimes installed here,
with their libraries' versions, and the extras it accepts. Prints its logcat
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

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.runtimes import app_engine
from nnlite_tui.simdevice.bench_args import ARGS_ERROR_TYPE, ArgsError, BenchRequest, JavaLong, parse

V2_REPORT_KEYS = ("warmup_seconds", "require_full_delegation", "timing", "native_stats", "native_samples_ns",
                  "warmup_runs", "warmup_mean_ns", "delegation", "memory", "conditions", "input_fill")
V3_REPORT_KEYS = ("runtime", "runtime_version", "capabilities")
SETTINGS_KEYS = ("threads", "warmup", "warmup_seconds", "runs", "min_seconds", "seed", "require_full_delegation")

# The delegate a simulated device lacks, in the words the app's LiteRtEngine uses on a real one.
UNAVAILABLE = {
    "gpu": "GPU delegate not supported on this device (simulated device: host CPU only)",
    "nnapi": "NNAPI delegate has no accelerator driver (simulated device: host CPU only)",
}
DELEGATE_ERROR = "org.nnlite.bench.DelegateUnavailableException"


PROTOCOL_VERSION = 3
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


def runtimes_here() -> dict[str, str]:
    """The runtimes this simulated app build has: those installed on the host, with their versions."""
    from nnlite_tui.core.runtimes import RUNTIMES, get_runtime

    out = {}
    for name in RUNTIMES:
        runtime = get_runtime(name)
        if runtime.unavailable() is None:
            out[name] = runtime.versions()[runtime.library]
    return out


def capabilities(job: dict) -> dict:
    from nnlite_tui.simdevice.bench_args import accepted

    return {"runtimes": runtimes_here(),
            "extras": sorted(accepted(job.get("protocol", PROTOCOL_VERSION), job.get("app_ops") != "unknown"))}


def _envelope(job: dict, report: dict, fallback: str | None) -> dict:
    report["fallback_reason"] = fallback
    protocol = job.get("protocol", PROTOCOL_VERSION)
    if protocol < 2:  # the previous app releases wrote none of these
        for key in V2_REPORT_KEYS:
            report.pop(key, None)
    if protocol < 3:
        for key in V3_REPORT_KEYS:
            report.pop(key, None)
    else:
        report["capabilities"] = capabilities(job)
    report.update({"protocol_version": job.get("protocol", PROTOCOL_VERSION), "app_version": job["app_version"], "simulated": True,
                   "started_at_ms": job["started_at_ms"], "finished_at_ms": int(time.time() * 1000),
                   "device": job["device"]})
    head = ("protocol_version", "app_version", "simulated", "valid", "error_stage", "error_type", "error_message")
    return {**{k: report[k] for k in head}, **{k: v for k, v in report.items() if k not in head}}


def args_report(job: dict, err: ArgsError) -> dict:
    v = err.values
    report = {"valid": False, "error_stage": "args", "error_type": ARGS_ERROR_TYPE, "error_message": str(err),
              "run_id": v["run_id"], "model_path": v["model_path"], "backend_requested": v["backend"],
              "backend_used": None, "runtime": v.get("runtime"),
              "runtime_version": runtimes_here().get(v.get("runtime") or ""), **{k: v[k] for k in SETTINGS_KEYS}}
    return _envelope(job, report, None)


def bench_report(job: dict, req: BenchRequest) -> dict:
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.bench.protocol import benchmark_result

    s = req.settings
    requested = s["backend"]
    ran = requested if requested in ("cpu", "xnnpack") else "xnnpack"
    fallback = (f"{requested} -> xnnpack: load failed: {DELEGATE_ERROR}: {UNAVAILABLE[requested]}"
                if ran != requested else None)
    # An engine whose program's delegates are fixed at export names them but cannot count their nodes.
    fixed = app_engine(req.runtime).fixed_delegates
    settings = BenchSettings(warmup=s["warmup"], runs=s["runs"], min_seconds=s["min_seconds"], max_runs=s["max_runs"],
                             max_seconds=s["max_seconds"], threads=s["threads"], backend=ran, seed=s["seed"],
                             warmup_seconds=s["warmup_seconds"],
                             require_full_delegation=s["require_full_delegation"] and not fixed)
    import_runtime(req.runtime)
    before = ask_conditions()
    result = benchmark_result(job["model_host"], settings, req.run_id, fill=faulty_fill(job.get("input_fault")),
                              runtime=req.runtime, feed=req.inputs, after_timed=energy_windows(job, req),
                              ranges=req.ranges)
    if fixed:  # the backend the program's delegates make it (ExecuTorchFacts.fallback)
        ran, fallback = result["backend_used"], result["fallback_reason"]
        if result["valid"] and s["require_full_delegation"]:
            result = uncounted_delegation_failure(result)
    if result["valid"]:
        result["conditions"] = conditions_block(before, ask_conditions())
        if "energy" in result:
            log("I", energy_math.log_line(req.run_id, result["energy"]))
        if req.profile_ops and job.get("app_ops", "host") == "host" and app_engine(req.runtime).may_profile_ops:
            result.update(ops_blocks(job, req, settings))
    result.update(model_path=req.model_path, backend_requested=requested, backend_used=ran)
    if result.get("error_message"):
        result["error_message"] = result["error_message"].replace(job["model_host"], req.model_path)
    if not result["valid"]:
        log("E", f"ERROR stage={result['error_stage']} type={result['error_type']} message={result['error_message']}")
    return _envelope(job, result, fallback)


class SimBatterySource:
    """The simulated phone's battery as the app's AndroidBattery reads it: the gauge's counters on the
    sampling thread, the broadcast (with the device's battery temperature) on the app's thread."""

    def __init__(self, spec):
        from nnlite_tui.simdevice.battery import SimGauge

        self.spec = spec
        self.gauge = SimGauge(spec, time.monotonic_ns())

    def sources(self) -> dict:
        return self.gauge.sources()

    def read(self, t_ns: int):
        return self.gauge.read(t_ns)

    def state(self):
        return self.spec.broadcast(int(time.time() * 1000), ask_conditions().get("battery_temperature_c"))

    def load(self, busy: bool) -> None:
        self.gauge.load(busy, time.monotonic_ns())


def energy_windows(job: dict, req: BenchRequest):
    """With the energy extras: the protocol's windows after the timed runs, over the simulated battery."""
    if req.energy_seconds is None:
        return None
    from nnlite_tui.core.bench.energy_run import measure
    from nnlite_tui.simdevice.battery import BatterySpec

    source = SimBatterySource(BatterySpec.from_dict(job.get("battery") or {}))

    def windows(invoke) -> dict:
        return {"energy": measure(invoke, req.energy_seconds, source, "simulated", on_load=source.load)}

    return windows


def import_runtime(name: str) -> None:
    """The runtime's benchmark imports, before its model is loaded and timed."""
    import importlib

    from nnlite_tui.core.runtimes import get_runtime

    for module in get_runtime(name).bench_imports:
        importlib.import_module(module)


def uncounted_delegation_failure(result: dict) -> dict:
    """The app's ExecuTorch engine cannot count a partition's nodes, so require_full_delegation fails at load
    (android-app core, Delegation.kt), with the measurements dropped."""
    backends = (result.get("delegation") or {}).get("backends") or []
    kept = {k: v for k, v in result.items() if k in ("run_id", "model_path", "runtime", "runtime_version",
                                                      "backend_requested", "backend_used", "fallback_reason",
                                                      *SETTINGS_KEYS)}
    return {**kept, "require_full_delegation": True, "valid": False, "error_stage": "load",
            "error_type": "BenchmarkError",
            "error_message": "require_full_delegation: the runtime names the program's delegates "
                             f"({', '.join(backends) or 'none'}) but not how many nodes they took"}


def faulty_fill(fault: dict | None):
    """The input filler of an app that misapplies quantization (fault input_scale/input_zero_point):
    it quantizes with the wrong parameters but, like a real bug would, reports the model's."""
    if not fault:
        return None
    from nnlite_tui.core.bench.input_fill import make_input

    def fill(shape, dtype, seed, quantization, value_range=None):
        if quantization is not None and float(quantization[0]) > 0.0:
            quantization = (float(quantization[0]) * fault["scale"], int(quantization[1]) + fault["zero_point"])
        return make_input(shape, dtype, seed, quantization, value_range)

    return fill


def ops_blocks(job: dict, req: BenchRequest, settings) -> dict:
    """The per-op profile the host asked for (PROTOCOL.md section 9e), after the timed runs: the host's
    own profiler on the host's interpreter, as for the host device; the model's path is the device's."""
    from dataclasses import replace

    from nnlite_tui.core.runtimes import get_runtime

    blocks = get_runtime(req.runtime).profile(job["model_host"], replace(settings, profile_ops=req.profile_ops,
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
              "runtime": req.runtime, "runtime_version": runtimes_here().get(req.runtime),
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
        req = parse(extras, job.get("protocol", PROTOCOL_VERSION), profile_extras=job.get("app_ops") != "unknown",
                    available=tuple(runtimes_here()))
    except ArgsError as err:
        log("E", f"ERROR stage=args type={ARGS_ERROR_TYPE} message={err}")
        if err.report_path is None:
            log("E", "no report written: report_path missing")
            return
        report, report_path = args_report(job, err), err.report_path
    else:
        s = req.settings
        runtime = f" runtime={req.runtime}" if job.get("protocol", PROTOCOL_VERSION) >= 3 else ""
        log("I", f"START run_id={req.run_id} model={req.model_path}{runtime} backend={s['backend']} "
                 f"threads={s['threads']} warmup={s['warmup']} runs={s['runs']}")
        report_path = req.report_path
        engine = app_engine(req.runtime)
        # As the Android app (BenchRunner): an engine that cannot profile, or an app build without a profiler.
        if req.profile_ops and (not engine.may_profile_ops or job.get("app_ops", "host") == "none"):
            log("I", f"NO_OPS_PROFILE profile_ops={req.profile_ops}: {engine.no_ops_reason}; the report has no ops block")
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
    import importlib

    from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime

    # LiteRT's, which most launches need; another runtime's are imported when a job asks for it, before
    # anything is timed (bench_report), so a LiteRT launch never carries ExecuTorch's torch.
    for module in get_runtime(DEFAULT_RUNTIME).bench_imports:
        importlib.import_module(module)

    job_line = sys.stdin.readline()
    if job_line.strip():  # no job: the spare process was let go
        run(json.loads(job_line))
        # The report is written: end now, without the teardown of torch and the runtimes, so the launch
        # is over when the host reads the report (as an app's activity finishing).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
