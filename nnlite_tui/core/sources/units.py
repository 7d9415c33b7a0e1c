"""Units of work: a model times the runtimes and precisions a run asks for.

Every model is converted once to fp32 per runtime; fp16, dynamic-range int8 and full int8 are derived
from that fp32 artifact (convert/derive.py). Each (model, runtime, precision) is its own unit: the
spec carries `runtime` and `precision`, and the unit's name is the model's, then `@<runtime>` for any
runtime but LiteRT (the default, so the names of runs before runtimes existed stay as they were), then
`@<precision>` for any precision but fp32:

    resnet          LiteRT fp32             resnet@int8              LiteRT int8
    resnet@executorch   ExecuTorch fp32     resnet@executorch@int8   ExecuTorch int8

so each has its own state, cache entry, report and summary row. A runtime that cannot make a precision
(runtimes.base.Runtime.precisions) still gets the unit, skipped with the reason when it is converted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from nnlite_tui.core.choices import parse_choices
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME
from nnlite_tui.core.spec import ModelSpec

PRECISIONS = ("fp32", "fp16", "dynamic-int8", "int8")


def parse_precisions(text: str | Iterable[str]) -> tuple[str, ...]:
    """"fp32,int8" or "all" -> the precisions in canonical order; ValueError names an unknown one."""
    return parse_choices(text, PRECISIONS, "precision")


def unit_name(model: str, precision: str, runtime: str = DEFAULT_RUNTIME) -> str:
    name = model if runtime == DEFAULT_RUNTIME else f"{model}@{runtime}"
    return name if precision == "fp32" else f"{name}@{precision}"


def model_of(name: str, precision: str = "fp32", runtime: str = DEFAULT_RUNTIME) -> str:
    """The model a unit measures: its name without the unit's runtime and precision suffixes."""
    for suffix in (f"@{precision}" if precision != "fp32" else "", f"@{runtime}" if runtime != DEFAULT_RUNTIME else ""):
        if suffix and name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def parse_unit(name: str) -> tuple[str, str, str]:
    """(model, runtime, precision) of a unit's name, by its suffixes (a model named `x@y` with `y` no
    runtime or precision keeps its whole name)."""
    from nnlite_tui.core.runtimes import runtime_names

    model, precision, runtime = name, "fp32", DEFAULT_RUNTIME
    head, sep, tail = model.rpartition("@")
    if sep and tail in PRECISIONS:
        model, precision = head, tail
    head, sep, tail = model.rpartition("@")
    if sep and tail in runtime_names():
        model, runtime = head, tail
    return model, runtime, precision


def base_spec(spec: ModelSpec) -> ModelSpec:
    """The fp32 unit (of the same runtime) a derived unit comes from."""
    if spec.precision == "fp32":
        return spec
    suffix = f"@{spec.precision}"
    name = spec.name[: -len(suffix)] if spec.name.endswith(suffix) else spec.name
    return replace(spec, name=name, precision="fp32")


def expand(specs: Sequence[ModelSpec], precisions: Sequence[str],
           runtimes: Sequence[str] = (DEFAULT_RUNTIME,)) -> list[ModelSpec]:
    """One spec per (model, runtime, precision), precision by precision and runtime by runtime: every
    fp32 unit comes first, so that a derived unit mostly finds its fp32 conversion already in the
    cache, and the units of a runtime added to a run come after the ones it had."""
    return [spec if (precision, runtime) == ("fp32", DEFAULT_RUNTIME) else
            replace(spec, name=unit_name(spec.name, precision, runtime), precision=precision, runtime=runtime)
            for precision in precisions for runtime in runtimes for spec in specs]


