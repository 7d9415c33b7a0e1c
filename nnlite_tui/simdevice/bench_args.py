"""Intent extras -> benchmark settings, exactly as the app's BenchArgs.parse (android-app core).

Same rules, same messages, same order: numbers may arrive as --ei/--el, an integral --ef or a
decimal string; a present extra that does not parse is an error, never a default; unknown extra
names are errors (except android.* / com.android.*); all errors of one intent joined by "; ".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nnlite_tui.core.runtimes import APP_RUNTIMES, app_engine, get_runtime

BACKENDS = ("cpu", "xnnpack", "gpu", "nnapi")
DEFAULTS = {"warmup": 5, "runs": 50, "min_seconds": 1.0, "max_runs": 10_000, "max_seconds": 60.0,
            "threads": 1, "backend": "xnnpack", "seed": 0, "warmup_seconds": 0.5, "require_full_delegation": False}
KNOWN = {"model_path", "report_path", "run_id", "backend", "warmup", "runs", "max_runs", "threads",
         "min_seconds", "max_seconds", "seed", "warmup_seconds", "require_full_delegation", "profile_ops",
         "profile_runs", "runtime", "input_shapes", "input_dtypes", "input_ranges", "energy", "energy_seconds"}
# Extras an app of protocol 1 does not know.
V2_KEYS = {"warmup_seconds", "require_full_delegation", "profile_ops", "profile_runs"}
# Extras an app of protocol 2 does not know (the runtime's, the token ranges and the energy windows').
V3_KEYS = {"runtime", "input_shapes", "input_dtypes", "input_ranges", "energy", "energy_seconds"}
ENERGY_SECONDS = (1.0, 600.0, 10.0)  # EnergyRun.MIN_SECONDS, MAX_SECONDS, DEFAULT_SECONDS
RUNTIMES = APP_RUNTIMES  # the app's Runtime enum, in order
APP_DEFAULT_RUNTIME = APP_RUNTIMES[0]  # what the app runs when no `runtime` extra is sent (an app before protocol 3)
# InputFill.DTYPE_SIZES, in the app's order
DTYPE_SIZES = {"float32": 4, "int32": 4, "uint8": 1, "int64": 8, "bool": 1, "int16": 2, "int8": 1, "float16": 2,
               "float64": 8, "uint16": 2, "uint32": 4}
PROFILE_KEYS = {"profile_ops", "profile_runs"}
PROFILE_MODES = ("xnnpack", "builtin", "both")
DEFAULT_PROFILE_RUNS = 20
ARGS_ERROR_TYPE = "org.nnlite.bench.core.ArgsException"
INT_MAX = 2**31 - 1


class JavaLong(int):
    """An `--el` extra: an int that remembers it was a Java Long (for error messages)."""


class ArgsError(ValueError):
    def __init__(self, message: str, report_path: str | None, values: dict):
        super().__init__(message)
        self.report_path, self.values = report_path, values


@dataclass(frozen=True)
class BenchRequest:
    model_path: str
    report_path: str
    run_id: str
    settings: dict  # warmup, runs, min_seconds, max_runs, max_seconds, threads, backend, seed
    profile_ops: str | None = None  # a per-op profile after the timed runs (PROTOCOL.md section 9e)
    profile_runs: int = DEFAULT_PROFILE_RUNS
    runtime: str = APP_DEFAULT_RUNTIME  # protocol 3 (PROTOCOL.md section 3a)
    inputs: list[tuple[list[int], str]] | None = None  # the shapes and dtypes the host sent, for an engine that needs them
    energy_seconds: float | None = None  # the energy windows' length when `energy` was sent true (section 9f)
    ranges: tuple = ()  # per input: (low, high) an integer input's fill stays in, or None (`input_ranges`)


def _java_name(v: object) -> str:
    if isinstance(v, bool):
        return "Boolean"
    if isinstance(v, JavaLong):
        return "Long"
    return {int: "Integer", float: "Float", str: "String"}.get(type(v), type(v).__name__)


def _describe(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return f"'{v}'"
    text = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return f"{text} ({_java_name(v)})"


def _as_double(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        d = float(v)
    elif isinstance(v, str):
        if "_" in v:  # Python's float() takes "1_0"; Java's parseDouble does not
            return None
        try:
            d = float(v.strip())
        except ValueError:
            return None
    else:
        return None
    return d if math.isfinite(d) else None


def _as_long(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        d = _as_double(v)
        return int(d) if d is not None and d == math.floor(d) and abs(d) < 9.0e15 else None
    if isinstance(v, str):
        text = v.strip()
        body = text[1:] if text[:1] in "+-" else text
        return int(text) if body.isdigit() else None
    return None


def _as_bool(v: object) -> bool | None:
    """`--ez key true` (a Boolean extra) or the strings true/false, as the app's BenchArgs."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return {"true": True, "false": False}.get(v.strip().lower())
    return None


def accepted(protocol: int = 3, profile_extras: bool = True) -> set[str]:
    """The extras an app of this protocol (and profile support) accepts."""
    known = KNOWN if protocol >= 3 else KNOWN - V3_KEYS if protocol == 2 else KNOWN - V2_KEYS - V3_KEYS
    return known if profile_extras else known - PROFILE_KEYS


def parse(extras: dict[str, object], protocol: int = 3, profile_extras: bool = True,
          available: tuple[str, ...] = (APP_DEFAULT_RUNTIME,)) -> BenchRequest:
    """`protocol=1` parses as the previous app did: no warm-up by time, no version-2 extras; `protocol=2`
    without the runtime extras; `profile_extras=False` as an app build from before the profile extras.
    `available`: the runtimes this (simulated) app build has."""
    errors: list[str] = []
    known = accepted(protocol, profile_extras)

    def string(key: str, required: bool) -> str | None:
        v = extras.get(key)
        if v is None and key not in extras:
            if required:
                errors.append(f"missing {key}")
            return None
        if v is None:  # `am start --esn key`
            errors.append(f"{key} is null")
            return None
        if not isinstance(v, str):
            errors.append(f"{key} must be a string, got {_java_name(v)}")
            return None
        if required and not v.strip():
            errors.append(f"empty {key}")
            return None
        return v

    def number(key: str, conv, kind: str):
        if key in V2_KEYS and protocol < 2:
            return 0.0 if key == "warmup_seconds" else False
        if key not in extras:
            return DEFAULTS[key]
        parsed = conv(extras[key])
        if parsed is None:
            errors.append(f"{key} must be {kind}, got {_describe(extras[key])}")
        return parsed

    model_path, report_path, run_id = string("model_path", True), string("report_path", True), string("run_id", True)
    backend = string("backend", False) or (None if "backend" in extras else DEFAULTS["backend"])
    if backend is not None and backend not in BACKENDS:
        errors.append(f"unknown backend '{backend}' (one of {', '.join(BACKENDS)})")
    integer, finite = (_as_long, "an integer"), (_as_double, "a finite number")
    warmup = number("warmup", *integer)
    warmup_seconds = number("warmup_seconds", *finite)
    runs = number("runs", *integer)
    min_seconds, max_runs = number("min_seconds", *finite), number("max_runs", *integer)
    max_seconds, threads, seed = number("max_seconds", *finite), number("threads", *integer), number("seed", *integer)
    require_full = number("require_full_delegation", _as_bool, "true or false")
    profile_ops = string("profile_ops", False) if protocol >= 2 and profile_extras else None
    if profile_ops is not None and profile_ops not in PROFILE_MODES:
        errors.append(f"unknown profile_ops '{profile_ops}' (one of {', '.join(PROFILE_MODES)})")
    profile_runs = DEFAULT_PROFILE_RUNS
    if protocol >= 2 and profile_extras and "profile_runs" in extras:
        profile_runs = _as_long(extras["profile_runs"])
        if profile_runs is None:
            errors.append(f"profile_runs must be an integer, got {_describe(extras['profile_runs'])}")
    runtime, inputs = (_runtime(extras, string, backend, available, errors) if protocol >= 3
                       else (APP_DEFAULT_RUNTIME, None))
    energy, energy_seconds = False, ENERGY_SECONDS[2]
    if protocol >= 3:
        if "energy" in extras:
            energy = _as_bool(extras["energy"])
            if energy is None:
                errors.append(f"energy must be true or false, got {_describe(extras['energy'])}")
        if "energy_seconds" in extras:
            energy_seconds = _as_double(extras["energy_seconds"])
            if energy_seconds is None:
                errors.append(f"energy_seconds must be a finite number, got {_describe(extras['energy_seconds'])}")
    ranges_text = string("input_ranges", False) if protocol >= 3 else None
    ranges = _input_ranges(ranges_text, errors) if ranges_text is not None else ()
    values = {"model_path": model_path, "run_id": run_id, "backend": backend, "warmup": warmup,
              "warmup_seconds": warmup_seconds, "runs": runs, "min_seconds": min_seconds, "max_runs": max_runs,
              "max_seconds": max_seconds, "threads": threads, "seed": seed, "require_full_delegation": require_full,
              "runtime": runtime if protocol >= 3 else None}
    for key in sorted(extras):
        if key not in known and not key.startswith(("android.", "com.android.")):
            errors.append(f"unknown extra '{key}'")
    checks = [(warmup, lambda x: 0 <= x <= INT_MAX, f"warmup must be >= 0, got {warmup}"),
              (runs, lambda x: 1 <= x <= INT_MAX, f"runs must be >= 1, got {runs}"),
              (max_runs, lambda x: 1 <= x <= INT_MAX, f"max_runs must be >= 1, got {max_runs}")]
    for value, ok, message in checks:
        if value is not None and not ok(value):
            errors.append(message)
    if runs is not None and max_runs is not None and max_runs < runs:
        errors.append(f"max_runs {max_runs} below runs {runs}")
    for value, ok, message in [(threads, lambda x: 1 <= x <= 1024, f"threads must be in 1..1024, got {threads}"),
                               (min_seconds, lambda x: x >= 0, f"min_seconds must be >= 0, got {min_seconds}"),
                               (max_seconds, lambda x: x > 0, f"max_seconds must be > 0, got {max_seconds}"),
                               (seed, lambda x: x >= 0, f"seed must be >= 0, got {seed}"),
                               (profile_runs, lambda x: 1 <= x <= INT_MAX, f"profile_runs must be >= 1, got {profile_runs}"),
                               (warmup_seconds, lambda x: x >= 0,
                                f"warmup_seconds must be >= 0, got {warmup_seconds}")]:
        if value is not None and not ok(value):
            errors.append(message)
    low, high, _ = ENERGY_SECONDS
    if energy_seconds is not None and not low <= energy_seconds <= high:
        errors.append(f"energy_seconds must be in {low}..{high}, got {energy_seconds}")
    if errors:
        raise ArgsError("; ".join(errors), report_path, values)
    settings = {k: values[k] for k in ("warmup", "runs", "min_seconds", "max_runs", "max_seconds", "threads",
                                       "backend", "seed", "warmup_seconds", "require_full_delegation")}
    return BenchRequest(model_path, report_path, run_id, settings, profile_ops, profile_runs, runtime, inputs,
                        energy_seconds if energy else None, ranges)


def _input_ranges(text: str, errors: list[str]) -> tuple:
    """`input_ranges`: a JSON array with, per input, null or [low, high] (integers, low < high), as the
    app's InputRanges.parse."""
    import json

    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None

    def valid(r) -> bool:
        return r is None or (isinstance(r, list) and len(r) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in r) and r[0] < r[1])

    if not isinstance(parsed, list) or not all(valid(r) for r in parsed):
        errors.append(f"input_ranges must be a JSON array of null or [low, high] integer pairs with low < high, "
                      f"got '{text}'")
        return ()
    return tuple(None if r is None else (r[0], r[1]) for r in parsed)


def _runtime(extras: dict[str, object], string, backend: str | None, available: tuple[str, ...],
             errors: list[str]) -> tuple[str | None, list[tuple[list[int], str]] | None]:
    """The runtime extras, as the app's BenchArgs: (the runtime's name as sent, the inputs the host sent for an
    engine that cannot read them)."""
    name = string("runtime", False)
    if name is None and "runtime" not in extras:
        name = APP_DEFAULT_RUNTIME
    runtime = name
    if name is not None and name not in RUNTIMES:
        errors.append(f"unknown runtime '{name}' (one of {', '.join(RUNTIMES)})")
        runtime = None
    elif name is not None and name not in available:
        errors.append(f"runtime '{name}' is not in this app build (it has "
                      f"{', '.join(r for r in RUNTIMES if r in available)})")
        runtime = None
    if runtime is None:
        return name, None
    engine = app_engine(runtime)
    if backend is not None and backend not in engine.backends:
        errors.append(f"backend '{backend}' is not available with runtime {runtime} (its program's delegates are "
                      f"fixed at export; it takes {', '.join(engine.backends)})")
    shapes, dtypes = string("input_shapes", False), string("input_dtypes", False)
    inputs = None
    if engine.inputs_sent_why:
        if shapes is None:
            if "input_shapes" not in extras:
                errors.append(f"missing input_shapes (runtime {runtime} needs them: {engine.inputs_sent_why})")
        else:
            inputs = _input_spec(shapes, dtypes, errors)
    else:
        needing = [n for n in APP_RUNTIMES if app_engine(n).inputs_sent_why]
        for key in ("input_shapes", "input_dtypes"):
            if key in extras:
                errors.append(f"{key} is for runtime {', '.join(needing)} only ({get_runtime(runtime).label} reads "
                              "the inputs from the model)")
    return name, inputs


def _input_spec(shapes: str, dtypes: str | None, errors: list[str]) -> list[tuple[list[int], str]] | None:
    import json

    try:
        parsed = json.loads(shapes)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list) or not all(
            isinstance(s, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in s)
            for s in parsed):
        errors.append(f"input_shapes must be a JSON array of arrays of integers >= 0, got '{shapes}'")
        return None
    try:
        names = ["float32"] * len(parsed) if dtypes is None else json.loads(dtypes)
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        errors.append(f"input_dtypes must be a JSON array of dtype names, got '{dtypes}'")
        return None
    if len(names) != len(parsed):
        errors.append(f"input_dtypes has {len(names)} entries for {len(parsed)} input_shapes")
        return None
    unknown = [n for n in names if n not in DTYPE_SIZES]
    if unknown:
        errors.append(f"unknown input dtype {', '.join(repr(n) for n in unknown)} (one of {', '.join(DTYPE_SIZES)})")
        return None
    for i, (shape, name) in enumerate(zip(parsed, names)):
        size = DTYPE_SIZES[name]
        for d in shape:
            size *= d
            if size > INT_MAX:
                errors.append(f"input {i} of shape [{', '.join(map(str, shape))}] needs more than 2 GiB")
                return None
    return [(list(shape), name) for shape, name in zip(parsed, names)]
