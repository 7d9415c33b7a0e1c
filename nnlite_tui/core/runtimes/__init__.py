"""On-device runtimes behind one protocol (base.py), registered here and nowhere else.

A runtime is a package beside litert/ and executorch/ that implements base.Runtime, plus its name
in RUNTIMES and its import in get_runtime. Stages ask for a runtime by name (`get_runtime("litert")`);
importing a runtime's package is cheap (its converter and interpreter are imported inside its
methods), and works whether or not its libraries are installed (`unavailable()` says what is missing).
"""

from __future__ import annotations

from functools import cache

from nnlite_tui.core.choices import parse_choices
from nnlite_tui.core.runtimes.base import Runtime, RuntimeUnavailable

DEFAULT_RUNTIME = "litert"
RUNTIMES = ("litert", "executorch")

__all__ = ["DEFAULT_RUNTIME", "RUNTIMES", "Runtime", "RuntimeUnavailable", "check_available", "get_runtime",
           "parse_runtimes"]


@cache
def get_runtime(name: str) -> Runtime:
    if name == "litert":
        from nnlite_tui.core.runtimes.litert import LITERT

        return LITERT
    if name == "executorch":
        from nnlite_tui.core.runtimes.executorch import EXECUTORCH

        return EXECUTORCH
    raise ValueError(f"unknown runtime {name!r}; choose from {', '.join(RUNTIMES)}")


def parse_runtimes(text: str) -> tuple[str, ...]:
    """"litert,executorch" or "all" -> runtimes in registry order; ValueError names an unknown one."""
    return parse_choices(text, RUNTIMES, "runtime")


def check_available(runtimes: tuple[str, ...]) -> None:
    """RuntimeUnavailable naming each asked-for runtime whose packages are missing here, and what to install."""
    missing = [f"--runtime {name}: {why}" for name in runtimes if (why := get_runtime(name).unavailable())]
    if missing:
        raise RuntimeUnavailable("; ".join(missing))
