"""Options shared by `nnlite convert` and `nnlite run`, and the exit codes of the CLI."""

from __future__ import annotations

import os
from collections.abc import Callable

import click



EXIT_CODES_HELP = """\b
Exit codes:
  0  every model reached done, failed or skipped (failures are results)
  1  internal error
  2  usage error (bad option, missing path, settings differ from the run being resumed)
  3  the state file is corrupt or unreadable (it is kept; the message names it)
  4  stopped before the end (signal or operator); rerun the same command to resume
  5  nothing could be done (no model found, no usable device)"""


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
        click.option("--limit", type=click.IntRange(min=0), help="At most N models."),
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
        click.option("--mem-cap-mb", type=int, default=4096, show_default=True,
                     help="A conversion worker using more memory is killed (out-of-memory)."),
        click.option("--recycle-after", type=click.IntRange(min=1), default=50, show_default=True,
                     help="Replace a conversion worker after this many conversions."),
        click.option("--nhwc/--no-nhwc", default=True, show_default=True,
                     help="Channels-last (NHWC) model input, as phones feed images."),
        click.option("--cache-dir", type=click.Path(file_okay=False), help="Conversion cache "
                     "(default $NNLITE_CACHE_DIR or ~/.cache/nnlite/convert)."),
        click.option("--no-cache", is_flag=True, help="Convert again even when a cached result exists."),
        click.option("--cache-max-gb", type=click.FloatRange(min=0), default=None, help="Size cap of the conversion "
                     "cache; least recently used entries go (default $NNLITE_CACHE_MAX_GB, else min(20 GB, 25% "
                     "of the free space at first use))."),
    ]):
        fn = deco(fn)
    return fn


def convert_options_from(kw: dict):
    from pathlib import Path

    from nnlite_tui.core.convert import ConvertOptions
    from nnlite_tui.core.convert_cache_cap import ENV_MAX_GB, parse_max_gb

    if kw.get("cache_max_gb") is None and os.environ.get(ENV_MAX_GB):
        try:
            parse_max_gb(os.environ[ENV_MAX_GB])
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    return ConvertOptions(timeout_s=kw["timeout_s"], mem_cap_mb=kw["mem_cap_mb"], recycle_after=kw["recycle_after"],
                          nhwc=kw["nhwc"], workers=kw["workers"], use_cache=not kw["no_cache"],
                          cache_dir=Path(kw["cache_dir"]) if kw.get("cache_dir") else None,
                          max_params=kw.get("max_params"), cache_max_gb=kw.get("cache_max_gb"))


def discover_or_exit(kw: dict):
    from nnlite_tui.core.sources import SourceError, discover

    try:
        return discover(list(kw["sources"]), in_shape=kw.get("in_shape"), num_classes=kw.get("num_classes"),
                        include=kw.get("include") or (), exclude=kw.get("exclude") or (), limit=kw.get("limit"),
                        warn=lambda msg: click.echo(f"warning: {msg}", err=True))
    except SourceError as exc:
        raise click.UsageError(str(exc)) from None
