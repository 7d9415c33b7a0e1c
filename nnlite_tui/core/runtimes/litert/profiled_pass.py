"""The host benchmark's profiled pass: per-op timings into the result's `ops` block, after the timed runs.

A profiling failure (a LiteRT without the C API this needs, a model the compiled-model API rejects)
is recorded in the block as `error` and never invalidates the timed result it follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # bench.py calls this module: at run time the settings come in as an argument
    from collections.abc import Sequence

    from nnlite_tui.core.bench.settings import BenchSettings


def profiled_pass(model_path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> dict[str, Any]:
    """{"ops": block} and, for "both", {"ops_builtin": block} beside the XNNPACK one; the model runs on
    the timed runs' inputs (token ids inside `ranges`, where a random pattern would index past a table)."""
    from nnlite_tui.core.runtimes.litert.op_profile import ProfileError, ProfilerUnavailable, profile_ops, timed_fills
    from nnlite_tui.core.ops.block import SCHEMA_VERSION
    from nnlite_tui.core.runtimes.litert.ops_block import build_ops_block
    from nnlite_tui.core.ops.graph import GraphError
    from nnlite_tui.core.runtimes.litert.graph import read_graph

    modes = ["xnnpack", "builtin"] if settings.profile_ops == "both" else [settings.profile_ops]
    names = {mode: "ops" if mode == modes[0] else f"ops_{mode}" for mode in modes}

    def failed(mode: str, exc: Exception) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "kernel_mode": mode, "error": str(exc), "ops": []}

    try:  # the graph and the inputs are the same for every kernel mode: read once
        graph = read_graph(model_path)
        fills = timed_fills(model_path, settings.seed, ranges)
    except (ProfileError, GraphError) as exc:
        return {names[mode]: failed(mode, exc) for mode in modes}
    out: dict[str, Any] = {}
    for mode in modes:
        try:
            profile = profile_ops(model_path, kernel_mode=mode, runs=settings.profile_runs,
                                  warmup=min(settings.warmup, 5), threads=settings.threads, fills=fills)
            out[names[mode]] = build_ops_block(graph, profile)
        except (ProfilerUnavailable, ProfileError) as exc:
            out[names[mode]] = failed(mode, exc)
    return out
