"""The host benchmark's profiled pass: per-op timings into the result's `ops` block, after the timed runs.

A profiling failure (a LiteRT without the C API this needs, a model the compiled-model API rejects)
is recorded in the block as `error` and never invalidates the timed result it follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # bench.py calls this module: at run time the settings come in as an argument
    from nnlite_tui.core.bench import BenchSettings


def profiled_pass(model_path: str, settings: BenchSettings) -> dict[str, Any]:
    """{"ops": block} and, for "both", {"ops_builtin": block} beside the XNNPACK one."""
    from nnlite_tui.core.op_profile import ProfileError, ProfilerUnavailable, profile_ops
    from nnlite_tui.core.predict.ops_block import SCHEMA_VERSION, build_ops_block
    from nnlite_tui.core.tflite_graph import GraphError, read_graph

    modes = ["xnnpack", "builtin"] if settings.profile_ops == "both" else [settings.profile_ops]
    out: dict[str, Any] = {}
    for mode in modes:
        name = "ops" if mode == modes[0] else f"ops_{mode}"
        try:
            graph = read_graph(model_path)
            profile = profile_ops(model_path, kernel_mode=mode, runs=settings.profile_runs,
                                  warmup=min(settings.warmup, 5), threads=settings.threads)
            out[name] = build_ops_block(graph, profile)
        except (ProfilerUnavailable, ProfileError, GraphError) as exc:
            out[name] = {"schema_version": SCHEMA_VERSION, "kernel_mode": mode, "error": str(exc), "ops": []}
    return out
