"""Options shared by `nnlite convert` and `nnlite run`, and the exit codes of the CLI."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import click

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME
from nnlite_tui.exit_codes import ExitCode



EXIT_CODES_HELP = """\b
Exit codes:
  0  every model reached done, failed or skipped (failures are results)
  1  internal error (a bug; --debug prints the traceback)
  2  usage error (bad option, missing path, settings differ from the run being resumed)
  3  the state file is corrupt or unreadable (it is kept; the message names it)
  4  stopped before the end (signal or operator); rerun the same command to resume
  5  nothing could be done (no model found, no usable device, no sandbox with --require-sandbox)
  7  the disk refused: full, read-only, no permission, I/O error (the message names the file)
  8  another nnlite process is writing this run directory (the message gives its pid)"""


def parse_shape(ctx, param, value: str | None):
    if value is None:
        return None
    try:
        dims = tuple(int(x) for x in value.replace("x", ",").split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a shape like 1,3,32,32") from None
    if len(dims) != 4 or any(d < 1 for d in dims):
        raise click.BadParameter(f"{value!r}: give four positive sizes B,C,H,W")
    return dims


def source_options(fn: Callable) -> Callable:
    for deco in reversed([
        click.argument("sources", nargs=-1, required=True),
        click.option("--in-shape", callback=parse_shape, help="Input shape B,C,H,W (default: 1,3,32,32, or what a "
                     "LEMUR tree's trials say)."),
        click.option("--num-classes", type=click.IntRange(min=1), help="Classes (default 10, or from the trials)."),
        click.option("--include", multiple=True, help="Only models whose name matches this glob (repeatable)."),
        click.option("--exclude", multiple=True, help="Skip models whose name matches this glob (repeatable)."),
        click.option("--limit", type=click.IntRange(min=1), help="At most N models (1 or more)."),
        click.option("--max-params", type=click.IntRange(min=1), help="Skip models with more parameters."),
    ]):
        fn = deco(fn)
    return fn


def convert_options(fn: Callable) -> Callable:
    for deco in reversed([
        click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Conversion worker processes (0: from cores and free memory)."),
        click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True,
                     help="Seconds one conversion may take."),
        click.option("--mem-cap-mb", type=click.IntRange(min=0), default=0, show_default=True,
                     help="A conversion worker using more memory is killed (out-of-memory); "
                          "0: half the available memory, within 2-16 GB."),
        click.option("--recycle-after", type=click.IntRange(min=1), default=50, show_default=True,
                     help="Replace a conversion worker after this many conversions."),
        click.option("--nhwc/--no-nhwc", default=True, show_default=True,
                     help="Channels-last (NHWC) model input, as phones feed images."),
        click.option("--weights", type=click.Choice(["dense", "as-built"]), default="dense", show_default=True,
                     help="dense: re-draw all-zero and duplicated weights before export, so that the converter "
                     "cannot fold the model's work away; as-built: the weights as the constructor left them."),
        click.option("--strict-weights", is_flag=True, help="Fail a model that requests pretrained weights at "
                     "construction (conversion is offline) instead of building it with random weights."),
        click.option("--cache-dir", type=click.Path(file_okay=False), help="Conversion cache "
                     "(default $NNLITE_CACHE_DIR or ~/.cache/nnlite/convert)."),
        click.option("--no-cache", is_flag=True, help="Convert again even when a cached result exists."),
        click.option("--cache-max-gb", type=click.FloatRange(min=0), default=None, help="Size cap of the conversion "
                     "cache; least recently used entries go (default $NNLITE_CACHE_MAX_GB, else min(20 GB, 25% "
                     "of the free space at first use))."),
        click.option("--runtime", "runtime", default=DEFAULT_RUNTIME, show_default=True, callback=_parse_runtime,
                     help=_runtime_help()),
        click.option("--precision", "precision", default="fp32", show_default=True, callback=_parse_precision,
                     help=_precision_help()),
        click.option("--calibration-samples", type=click.IntRange(min=1), default=32, show_default=True,
                     help="int8: synthetic representative inputs (standard normal, the model's input shape)."),
        click.option("--calibration", "calibration_dir", type=click.Path(file_okay=False),
                     help="int8: calibrate on the .npy/.npz arrays in this directory (the model's input shape, "
                     "NCHW, or N of them stacked) instead of synthetic inputs."),
        click.option("--require-sandbox", is_flag=True, help="Refuse to start unless model code can run in the "
                     "sandbox (bubblewrap: no network, no reach into your files); `nnlite doctor` says why not."),
        click.option("--no-sandbox", is_flag=True, help="Run model code without the sandbox, with the in-process "
                     "offline guard only (to compare; the model can then reach your files and the network)."),
    ]):
        fn = deco(fn)
    return fn


def convert_options_from(kw: dict, specs: list | None = None):
    """The conversion options the command line gives; with `specs`, their sources are visible in the
    sandbox from the first worker start."""
    from pathlib import Path

    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.convert.cache_cap import ENV_MAX_GB, parse_max_gb
    from nnlite_tui.core.convert.sandbox.sources import Sources, source_roots

    if kw.get("require_sandbox") and kw.get("no_sandbox"):
        raise click.UsageError("--require-sandbox and --no-sandbox contradict each other")
    sources = source_roots(specs) if specs else Sources()

    if kw.get("cache_max_gb") is None and os.environ.get(ENV_MAX_GB):
        try:
            parse_max_gb(os.environ[ENV_MAX_GB])
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    options = ConvertOptions(timeout_s=kw["timeout_s"], mem_cap_mb=kw["mem_cap_mb"], recycle_after=kw["recycle_after"],
                             nhwc=kw["nhwc"], weights=kw.get("weights") or "dense",
                             strict_weights=bool(kw.get("strict_weights")), workers=kw["workers"],
                             use_cache=not kw["no_cache"],
                             cache_dir=Path(kw["cache_dir"]) if kw.get("cache_dir") else None,
                             max_params=kw.get("max_params"), cache_max_gb=kw.get("cache_max_gb"),
                             calibration_samples=kw.get("calibration_samples", 32),
                             calibration_dir=_calibration_dir(kw.get("calibration_dir")),
                             sandbox="require" if kw.get("require_sandbox") else "off" if kw.get("no_sandbox") else "auto",
                             sandbox_sources=tuple(str(p) for p in sources.read_only),
                                sandbox_python_path=tuple(str(p) for p in sources.python_path))
    if kw.get("in_shape"):
        from nnlite_tui.core.convert.shape_budget import over_cap

        problem = over_cap(kw["in_shape"], options.cap_mb())
        if problem:
            raise click.UsageError(problem)
    return options


def announce_isolation(options) -> None:
    """Say once, at start, when model code runs with less than the sandbox; refuse to start (exit 5)
    under --require-sandbox then."""
    from nnlite_tui.core.convert.sandbox.availability import SandboxUnavailable, in_effect

    try:
        found = in_effect(options.sandbox)
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.NOTHING)
    except ValueError as exc:  # a bad $NNLITE_SANDBOX_MAX_TASKS
        raise click.UsageError(str(exc)) from None
    if not found.sandboxed:
        click.echo(f"warning: {found.describe()}", err=True)


def _runtime_help() -> str:
    """--runtime's help, from the registry: the runtimes this installation knows."""
    from nnlite_tui.core.runtimes import label_of, runtime_names

    return (f"On-device runtimes, comma-separated: {', '.join(runtime_names())}, or all. Each is its own unit "
            f"(<model> for {label_of(DEFAULT_RUNTIME)}, the default; <model>@<runtime> for another); a runtime whose "
            "packages are missing here is refused with what to install.")


def _precision_help() -> str:
    """--precision's help, with what each runtime that makes fewer than all of them makes."""
    from nnlite_tui.core.runtimes import get_runtime, runtime_names
    from nnlite_tui.core.sources.units import PRECISIONS

    fewer = [get_runtime(name) for name in runtime_names() if get_runtime(name).precisions != PRECISIONS]
    makes = "; ".join(f"{rt.label} makes {', '.join(rt.precisions)}" for rt in fewer)
    return (f"Precisions, comma-separated: {', '.join(PRECISIONS)}, or all. Each is its own unit "
            f"(<model>@<precision>), derived from the unit's fp32 artifact"
            + (f"; {makes} (its other units are skipped as not supported by this runtime)." if makes else "."))


def _parse_precision(ctx, param, value: str) -> tuple[str, ...]:
    from nnlite_tui.core.sources.units import parse_precisions

    try:
        return parse_precisions(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _parse_runtime(ctx, param, value: str) -> tuple[str, ...]:
    from nnlite_tui.core.runtimes import RuntimeUnavailable, check_available, parse_runtimes

    try:
        runtimes = parse_runtimes(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    try:
        check_available(runtimes)  # a runtime that is not installed is said at once, not per unit
    except RuntimeUnavailable as exc:
        raise click.UsageError(f"the runtime is unavailable: {exc}") from None
    return runtimes


def _calibration_dir(value: str | None):
    from pathlib import Path

    from nnlite_tui.core.convert.derive import check_calibration_dir

    if not value:
        return None
    path = Path(value).resolve()
    try:
        check_calibration_dir(path)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--calibration") from None
    return path


def discover_or_exit(kw: dict):
    from nnlite_tui.core.sources.discover import SourceError
    from nnlite_tui.core.sources.discover import discover

    try:
        return discover(list(kw["sources"]), in_shape=kw.get("in_shape"), num_classes=kw.get("num_classes"),
                        include=kw.get("include") or (), exclude=kw.get("exclude") or (), limit=kw.get("limit"),
                        precisions=kw.get("precision") or ("fp32",), runtimes=kw.get("runtime") or (DEFAULT_RUNTIME,),
                        warn=lambda msg: click.echo(f"warning: {msg}", err=True))
    except SourceError as exc:
        raise click.UsageError(str(exc)) from None
