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

from nnlite_tui.core.choices import parse_choices
from nnlite_tui.core.runtimes.base import Runtime, RuntimeUnavailable

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

# name -> "module:object", the default runtime (default.py) first.
REGISTRY: dict[str, str] = {
    "litert": "nnlite_tui.core.runtimes.litert:LITERT",
    "executorch": "nnlite_tui.core.runtimes.executorch:EXECUTORCH",
}
RUNTIMES = tuple(REGISTRY)

__all__ = ["DEFAULT_RUNTIME", "REGISTRY", "RUNTIMES", "Runtime", "RuntimeUnavailable", "check_available",
           "get_runtime", "label_of", "parse_runtimes", "runtime_names"]


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
