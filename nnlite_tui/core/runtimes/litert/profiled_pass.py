"""The host benchmark's profiled pass: per-op timings into the result's `ops` block, after the timed runs.

A profiling failure (a LiteRT without the C API this needs, a model the compiled-model API rejects)
is recorded in the block as `error` and never invalidates the timed result it follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # bench.py calls this module: at run time the settings come in as an argument
    from collections.abc import Sequence

    from nnlite_tui.core.bench.block import ProfiledBlocks
    from nnlite_tui.core.bench.settings import BenchSettings


def profiled_pass(model_path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> ProfiledBlocks:
    """{"ops": block} and, for "both", {"ops_builtin": block} beside the XNNPACK one; the model runs on
    the timed runs' inputs (token ids inside `ranges`, where a random pattern would index past a table)."""
    from nnlite_tui.core.runtimes.litert.op_profile import ProfileError, ProfilerUnavailable, profile_ops, timed_fills
    from nnlite_tui.core.ops.block import SCHEMA_VERSION
    from nnlite_tui.core.runtimes.litert.ops_block import build_ops_block
    from nnlite_tui.core.ops.graph import GraphError
    from nnlite_tui.core.runtimes.litert.graph import read_graph

    if settings.profile_ops is None:  # the callers ask only for a profile_ops mode
        raise ValueError("a profiled pass without a kernel mode (profile_ops is None)")
    modes = ["xnnpack", "builtin"] if settings.profile_ops == "both" else [settings.profile_ops]

    def failed(mode: str, exc: Exception) -> Mapping[str, object]:
        return {"schema_version": SCHEMA_VERSION, "kernel_mode": mode, "error": str(exc), "ops": []}

    blocks: list[Mapping[str, object]] = []
    try:  # the graph and the inputs are the same for every kernel mode: read once
        graph = read_graph(model_path)
        fills = timed_fills(model_path, settings.seed, ranges)
    except (ProfileError, GraphError) as exc:
        blocks = [failed(mode, exc) for mode in modes]
    else:
        for mode in modes:
            try:
                profile = profile_ops(model_path, kernel_mode=mode, runs=settings.profile_runs,
                                      warmup=min(settings.warmup, 5), threads=settings.threads, fills=fills)
                blocks.append(build_ops_block(graph, profile))
            except (ProfilerUnavailable, ProfileError) as exc:
                blocks.append(failed(mode, exc))
    out: ProfiledBlocks = {"ops": blocks[0]}
    if len(blocks) > 1:  # "both": the builtin kernels' beside the XNNPACK one
        out["ops_builtin"] = blocks[1]
    return out
