"""On-device runtimes behind one protocol (base.py), registered here and nowhere else.

A runtime is a package beside litert/ and executorch/ that implements base.Runtime (its name, label,
artifact suffix, precisions, report fields and what the views show of it), plus ONE line in REGISTRY
below: its name and where its Runtime object lives. Everything else (unit names, --runtime, the
result views, the reports' runtime keys) asks the registry; no other module names a runtime.

Stages ask for a runtime by name (`get_runtime("litert")`); importing a runtime's package is cheap
(its converter and interpreter are imported inside its methods), and works whether or not its
libraries are installed (`unavailable()` says what is missing).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Literal, get_args

from nnlite_tui.core.choices import parse_choices
from nnlite_tui.core.runtimes.base import AppEngine, Runtime, RuntimeUnavailable

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

# name -> "module:object", the default runtime (default.py) first.
REGISTRY: dict[str, str] = {
    "litert": "nnlite_tui.core.runtimes.litert:LITERT",
    "executorch": "nnlite_tui.core.runtimes.executorch:EXECUTORCH",
}
RUNTIMES = tuple(REGISTRY)
# The benchmark app's Runtime enum (android-app/PROTOCOL.md section 3a), in its order: the names its
# `runtime` extra, its reports and its capabilities use. The app's protocol fixes them, not this
# registry (a runtime registered above but not listed here runs on the host only), so they are written
# out here, the one place outside the runtimes' packages that names them; each names a registered runtime
# whose `app` says how the app runs it (tests/test_runtime_names.py).
AppRuntime = Literal["litert", "executorch"]
APP_RUNTIMES: tuple[str, ...] = get_args(AppRuntime)
# The runtime of the drift references (bench/reference.py): every device runs it (the host, and the app
# of every protocol version), so every device times the same bytes; its package writes the memory
# reference (dense_chain), and the compute reference ships as its artifact (core/bench/reference<suffix>).
REFERENCE_RUNTIME = DEFAULT_RUNTIME

__all__ = ["APP_RUNTIMES", "DEFAULT_RUNTIME", "REFERENCE_RUNTIME", "REGISTRY", "RUNTIMES", "AppEngine", "AppRuntime", "Runtime", "RuntimeUnavailable", "check_available",
           "converter_env_names", "get_runtime", "label_of", "parse_runtimes", "runtime_names"]


def runtime_names() -> tuple[str, ...]:
    """The registered runtimes, in registry order (read at call time: a test may register one more)."""
    return tuple(REGISTRY)


@cache
def get_runtime(name: str) -> Runtime:
    where = REGISTRY.get(name)
    if where is None:
        raise ValueError(f"unknown runtime {name!r}; choose from {', '.join(runtime_names())}")
    module, _, attr = where.partition(":")
    runtime: Runtime = getattr(importlib.import_module(module), attr)
    return runtime


def converter_env_names() -> frozenset[str]:
    """The environment variables the registered runtimes' converters read (a sandbox passes them in)."""
    return frozenset(var for name in runtime_names() for var in get_runtime(name).converter_env)


def app_engine(name: str) -> AppEngine:
    """How the benchmark app runs `name`, one of APP_RUNTIMES."""
    engine = get_runtime(name).app
    if engine is None:
        raise ValueError(f"runtime {name!r} is in the app's protocol but declares no app engine")
    return engine


def label_of(name: str) -> str:
    """The runtime's name as people write it ("LiteRT"); an unknown name (a report of a runtime this
    installation lacks) as it is."""
    return get_runtime(name).label if name in REGISTRY else name


def parse_runtimes(text: str) -> tuple[str, ...]:
    """"litert,executorch" or "all" -> runtimes in registry order; ValueError names an unknown one."""
    return parse_choices(text, runtime_names(), "runtime")


def check_available(runtimes: tuple[str, ...]) -> None:
    """RuntimeUnavailable naming each asked-for runtime whose packages are missing here, and what to install."""
    missing = [f"--runtime {name}: {why}" for name in runtimes if (why := get_runtime(name).unavailable())]
    if missing:
        raise RuntimeUnavailable("; ".join(missing))
