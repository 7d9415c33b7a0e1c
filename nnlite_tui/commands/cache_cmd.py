"""`nnlite cache info|prune`: the conversion cache shared by runs (no torch import)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

CACHE_DIR_OPTION = click.option("--cache-dir", type=click.Path(file_okay=False),
                                help="The cache (default $NNLITE_CACHE_DIR or ~/.cache/nnlite/convert).")


@click.group()
def cache() -> None:
    """The conversion cache: what it holds, and making it smaller."""


def _root(cache_dir: str | None) -> Path:
    from nnlite_tui.core.convert.cache import default_cache_dir

    return Path(cache_dir) if cache_dir else default_cache_dir()


def _cap(root: Path, max_gb: float | None):
    from nnlite_tui.core.convert.cache_cap import resolve_cap

    try:
        return resolve_cap(root, max_gb)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def _check_env() -> None:
    from nnlite_tui.core.convert.cache_cap import ENV_MAX_GB, parse_max_gb

    if os.environ.get(ENV_MAX_GB):
        try:
            parse_max_gb(os.environ[ENV_MAX_GB])
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


@cache.command()
@CACHE_DIR_OPTION
def info(cache_dir: str | None) -> None:
    """Directory, entries, total size, size cap, least and most recently used entry."""
    from nnlite_tui.core.convert.cache_scan import cache_usage
    from nnlite_tui.core.disk import fmt_bytes, free_bytes, mount_point

    root = _root(cache_dir)
    _check_env()
    if not root.is_dir():
        click.echo(f"{'dir':<12}{root} (not created yet: nothing cached)")
        return
    usage = cache_usage(root)
    cap = _cap(root, None)
    kinds = [f"{usage.failed} failed conversions"] if usage.failed else []
    kinds += [f"{usage.legacy} of an older layout, never read again"] if usage.legacy else []
    rows = [("dir", str(root)),
            ("entries", f"{usage.entries}" + (f" ({', '.join(kinds)})" if kinds else "")),
            ("size", fmt_bytes(usage.total_bytes) + (
                f" ({fmt_bytes(usage.shared_bytes)} of it also linked from run directories: pruning it frees "
                "that space only once those runs are deleted)" if usage.shared_bytes else "")),
            ("cap", f"{fmt_bytes(cap.max_bytes)} ({cap.source})")]
    for label, entry in (("oldest", usage.oldest), ("newest", usage.newest)):
        if entry is not None:
            rows.append((label, f"{entry.key[:16]}  last used {_when(entry.last_used)}  {fmt_bytes(entry.bytes)}"))
    if usage.in_progress:
        rows.append(("writing", f"{usage.in_progress} entries ({fmt_bytes(usage.in_progress_bytes)})"))
    rows.append(("disk free", f"{fmt_bytes(free_bytes(root))} on {mount_point(root)}"))
    for label, value in rows:
        click.echo(f"{label:<12}{value}")


@cache.command()
@click.option("--max-gb", type=click.FloatRange(min=0), default=None,
              help="Shrink to this size (default: the cap, see `nnlite cache info`).")
@click.option("--all", "everything", is_flag=True, help="Remove every entry.")
@CACHE_DIR_OPTION
def prune(max_gb: float | None, everything: bool, cache_dir: str | None) -> None:
    """Remove least recently used entries down to a size; entries in use by a run stay."""
    from nnlite_tui.core.convert.cache import ConversionCache
    from nnlite_tui.core.disk import GB, fmt_bytes

    if everything and max_gb is not None:
        raise click.UsageError("give --max-gb N or --all, not both")
    root = _root(cache_dir)
    _check_env()
    if not root.is_dir():
        click.echo(f"{root}: no cache here, nothing to prune")
        return
    try:
        store = ConversionCache(root)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    pruned = store.clear() if everything else store.evict(None if max_gb is None else int(max_gb * GB))
    click.echo(f"removed {len(pruned.removed)} entries ({fmt_bytes(pruned.freed_bytes)}); "
               f"{fmt_bytes(pruned.remaining_bytes)} left in {root}")
    if pruned.busy:
        click.echo(f"{pruned.busy} entries were in use by another process and stayed; prune again later",
                   err=True)
