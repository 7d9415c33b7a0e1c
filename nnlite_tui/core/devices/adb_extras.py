"""The benchmark app's intent extras (android-app/PROTOCOL.md, "Extras"), built and checked on the
host: every value is validated against the protocol's ranges before `am start`, so a bad setting
is one clear error at once instead of an `args` report from the device (or an `am` that silently
wraps a 64-bit number into a 32-bit extra).

Protocol 2 adds `warmup_seconds` and `require_full_delegation`; an app that speaks protocol 1
refuses unknown extras, so for it the host sends only the version-1 extras and says what the
report will lack. Protocol 3 adds the energy extras (`energy`, `energy_seconds`: adb_energy.py,
sent only when the run asks for energy) and the runtime's extras (`runtime`, `input_shapes`, `input_dtypes`:
runtimes.base.Runtime.app_extras), sent only for a runtime other than LiteRT, so an older app still
runs every LiteRT unit. A per-op profile is asked for with `profile_ops` (and `profile_runs`) only when the
run wants one; a report without the `ops` block it asked for gets one that says why (section 9e).
"""

from __future__ import annotations

import math
from typing import Any

from nnlite_tui.core.bench.settings import BACKENDS, BenchSettings
from nnlite_tui.core.devices import adb_energy
from nnlite_tui.core.devices.base import BenchBlock, DeviceError
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

PROTOCOL_VERSION = 3
SUPPORTED_PROTOCOLS = (1, 2, 3)
INT_MAX = 2**31 - 1  # --ei is a Java int
LONG_MAX = 2**63 - 1  # --el
FLOAT_MAX = 3.4028234663852886e38  # --ef is a Java float
MAX_THREADS = 1024
V2_EXTRAS = ("warmup_seconds", "require_full_delegation")
PROFILE_EXTRAS = ("profile_ops", "profile_runs")

# What a protocol-1 report lacks (the measured blocks protocol 2 added).
V2_FIELDS = ("warmup_seconds", "require_full_delegation", "timing", "native_stats", "native_samples_ns",
             "warmup_runs", "warmup_mean_ns", "delegation", "memory", "conditions")
# What a protocol-2 report lacks (what protocol 3 added beside energy, which is asked for).
V3_FIELDS = ("runtime", "runtime_version", "capabilities")


def no_app_profile(runtime: str = DEFAULT_RUNTIME) -> str:
    """Why an app's report of a unit of `runtime` has no ops block (its engine's reason, PROTOCOL.md section 9e)."""
    from nnlite_tui.core.runtimes import app_engine

    return (f"the benchmark app gives no per-op profile: {app_engine(runtime).no_ops_reason} "
            "(android-app/PROTOCOL.md, section 9e)")


def settings_errors(s: BenchSettings) -> list[str]:
    """Every value the app would refuse or `am` would mangle, in one list."""
    errors: list[str] = []

    def integer(name: str, value: Any, low: int, high: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{name} must be an integer, got {value!r}")
        elif not low <= value <= high:
            errors.append(f"{name} must be in {low}..{high}, got {value}")

    def number(name: str, value: Any, low: float, strict: bool = False) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            errors.append(f"{name} must be a finite number, got {value!r}")
        elif value < low or (strict and value == low) or abs(value) > FLOAT_MAX:
            errors.append(f"{name} must be {'>' if strict else '>='} {low:g} and fit a 32-bit float, got {value!r}")

    integer("warmup", s.warmup, 0, INT_MAX)
    integer("runs", s.runs, 1, INT_MAX)
    integer("max_runs", s.max_runs, 1, INT_MAX)
    integer("threads", s.threads, 1, MAX_THREADS)
    integer("seed", s.seed, 0, LONG_MAX)
    if s.profile_ops:
        integer("profile_runs", s.profile_runs, 1, INT_MAX)
    number("min_seconds", s.min_seconds, 0.0)
    number("max_seconds", s.max_seconds, 0.0, strict=True)
    number("warmup_seconds", s.warmup_seconds, 0.0)
    if isinstance(s.runs, int) and isinstance(s.max_runs, int) and s.max_runs < s.runs:
        errors.append(f"max_runs {s.max_runs} below runs {s.runs}")
    if s.backend not in BACKENDS:
        errors.append(f"backend {s.backend!r} is not one of {', '.join(BACKENDS)}")
    if not isinstance(s.require_full_delegation, bool):
        errors.append(f"require_full_delegation must be true or false, got {s.require_full_delegation!r}")
    return errors + adb_energy.settings_errors(s)


def check_settings(s: BenchSettings, serial: str) -> None:
    errors = settings_errors(s)
    if errors:
        raise DeviceError(f"{serial}: benchmark settings outside the app protocol's ranges: {'; '.join(errors)}",
                          kind="settings", transient=False)


def _float(value: float) -> str:
    return repr(float(value))


def launch_extras(model: str, report: str, launch_id: str, s: BenchSettings, protocol: int = PROTOCOL_VERSION,
                  runtime_extras: dict[str, str] | None = None) -> list[str]:
    """The `am start` extras for an app speaking `protocol` (settings already checked); `runtime_extras`
    (protocol 3) are the unit's runtime's, strings the link quotes for the device's shell."""
    seed_flag = "--ei" if s.seed <= INT_MAX else "--el"
    extras = ["--es", "model_path", model, "--es", "report_path", report, "--es", "run_id", launch_id,
              "--ei", "warmup", str(s.warmup), "--ei", "runs", str(s.runs), "--ef", "min_seconds", _float(s.min_seconds),
              "--ei", "max_runs", str(s.max_runs), "--ef", "max_seconds", _float(s.max_seconds),
              "--ei", "threads", str(s.threads), "--es", "backend", s.backend, seed_flag, "seed", str(s.seed)]
    if protocol >= 2:
        extras += ["--ef", "warmup_seconds", _float(s.warmup_seconds),
                   "--ez", "require_full_delegation", "true" if s.require_full_delegation else "false"]
        if s.profile_ops:
            extras += ["--es", "profile_ops", s.profile_ops, "--ei", "profile_runs", str(s.profile_runs)]
    if protocol >= 3:
        for key, value in (runtime_extras or {}).items():
            extras += ["--es", key, value]
        extras += adb_energy.extras(s)  # section 9f: only when the run asks for energy
    return extras


NO_RANGE_EXTRA = ("the installed benchmark app does not take the input_ranges extra, so it would fill token ids "
                  "outside their embedding table; install the current APK (android-app/README.md)")


def range_extras(ranges, protocol: int, serial: str) -> dict[str, str]:
    """`input_ranges` (protocol 3): per input, null or [low, high) of its integer fill, as JSON."""
    import json

    if protocol < 3:
        raise DeviceError(f"{serial}: the installed benchmark app speaks protocol {protocol}; {NO_RANGE_EXTRA}",
                          kind="install", transient=False)
    text = json.dumps([None if r is None else [int(r[0]), int(r[1])] for r in ranges], separators=(",", ":"))
    return {"input_ranges": text}


def error_message(result: BenchBlock) -> str:
    """The report's error message ("" when it has none)."""
    message = result.get("error_message")
    return message if isinstance(message, str) else ""


def refuses_range_extra(result: BenchBlock) -> bool:
    """An app built before the input_ranges extra: an `args` report naming it as unknown."""
    return result.get("error_stage") == "args" and "unknown extra 'input_ranges'" in error_message(result)


def refuses_v2_extras(result: BenchBlock) -> bool:
    """A protocol-1 app's answer to the version-2 extras: an `args` report naming them as unknown."""
    message = error_message(result)
    return (result.get("protocol_version") == 1 and result.get("error_stage") == "args"
            and any(f"unknown extra '{k}'" in message for k in V2_EXTRAS))


def check_v1_can_run(s: BenchSettings, serial: str) -> None:
    if s.require_full_delegation:
        raise DeviceError(f"{serial}: the installed benchmark app speaks protocol 1, which cannot require full "
                          "delegation; install the current APK (android-app/README.md)", kind="install",
                          transient=False)


def mark_protocol(result: BenchBlock) -> BenchBlock:
    """An older protocol's report is read as it is; the result says which later fields it lacks."""
    version = result.get("protocol_version")
    lacking = (V2_FIELDS + V3_FIELDS) if version == 1 else V3_FIELDS if version == 2 else ()
    result["protocol_missing_fields"] = [k for k in lacking if k not in result]
    return result


def refuses_profile_extras(result: BenchBlock) -> bool:
    """An app build from before section 9e: an `args` report naming the profile extras as unknown."""
    message = error_message(result)
    return result.get("error_stage") == "args" and any(f"unknown extra '{k}'" in message for k in PROFILE_EXTRAS)


def profile_modes(s: BenchSettings) -> list[str]:
    return [] if not s.profile_ops else ["xnnpack", "builtin"] if s.profile_ops == "both" else [s.profile_ops]


def check_ops(result: BenchBlock, s: BenchSettings, serial: str, why_none: str | None = None) -> BenchBlock:
    """The report's per-op profile, checked and stored as the host device stores its own: `ops` (and
    `ops_builtin` for "both") in the kernel mode asked for, through the ops block checks
    (core/ops/block_check.py); a valid report without one gets a block whose `error` says why, so a
    report that asked always answers."""
    from nnlite_tui.core.ops.block import SCHEMA_VERSION
    from nnlite_tui.core.ops.block_versions import read_block

    modes = profile_modes(s)
    for key in [k for k in ("ops", "ops_builtin") if k in result]:
        if not modes:
            raise DeviceError(f"{serial}: the report has an {key} block nobody asked for", kind="report")
        want = modes[0] if key == "ops" else "builtin"
        block = result[key]
        if not isinstance(block, dict) or block.get("kernel_mode") != want:
            got = block.get("kernel_mode") if isinstance(block, dict) else None
            raise DeviceError(f"{serial}: the report's {key} block is for kernel mode "
                              f"{got!r}, not the {want!r} asked for", kind="report")
        # Checked here as the host checks its own: a block that fails is stored marked invalid, with why.
        result[key] = read_block(block)
    if modes and result.get("valid"):
        for ops_key, mode in zip(("ops", "ops_builtin"), modes):
            result.setdefault(ops_key, {"schema_version": SCHEMA_VERSION, "kernel_mode": mode,
                                        "error": why_none or no_app_profile(), "ops": []})
    return result
