"""LiteRT (.tflite): litert-torch converts, ai-edge-quantizer derives precisions, ai-edge-litert runs.

The Runtime protocol's implementation for LiteRT. The modules beside this one are its internals:
export.py / validate.py (PyTorch -> .tflite in the worker, under convert/worker/export_fixes.py), quantize.py / pt2e.py /
compact.py (derived precisions), interpreter.py (the host benchmark session), op_profile.py,
profile_events.py, profiler_calibration.py, ops_block.py, profiled_pass.py (per-op profiles from
LiteRT's C API), graph.py (the .tflite flatbuffer reader) and dense_chain.py (the memory-bound
reference model, written from the schema). Nothing outside this package imports
them; everything goes through LITERT below.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.runtimes.base import AppEngine, GraphWork, Runtime
from nnlite_tui.core.versions import dist_version

if TYPE_CHECKING:
    from collections.abc import Sequence

    from nnlite_tui.core.bench.block import ProfiledBlocks
    from nnlite_tui.core.bench.session import BenchSession
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.convert.phases import PhaseClock
    from nnlite_tui.core.convert.worker.model import Prepared
    from nnlite_tui.core.ops.graph import Graph
    from nnlite_tui.core.runtimes.litert.export import PhaseTracker

# Bump when the worker's output for the same inputs changes (invalidates the cache).
# 6: models that draw at inference converted with their draws (convert/worker/stochastic.py);
# 5: weights policy (re-drawn tensors), compute check, sampling only by calls that draw, lowering
# rewrites (recorded), token ranges in input_signature, detection cut;
# 4: task inputs (task, input_signature), failure cause; 3: two validation inputs
FORMAT_VERSION = 6


class LiteRt:
    name = "litert"
    label = "LiteRT"
    suffix = ".tflite"
    precisions: tuple[str, ...] = ("fp32", "fp16", "dynamic-int8", "int8")
    format_version = FORMAT_VERSION
    library = "ai-edge-litert"  # whose version is a report's runtime_version
    converter = "litert-torch"
    converter_env: tuple[str, ...] = ("LITERT_TORCH_SHOW_PROGRESS",)
    converter_frames: tuple[str, ...] = ("/litert_torch/",)
    # The app's LiteRT engine (android-app/PROTOCOL.md sections 3a, 9e).
    app: AppEngine | None = AppEngine(
        backends=("cpu", "xnnpack", "gpu", "nnapi"), fixed_delegates=False,
        no_ops_reason="LiteRT's Android Interpreter API has no per-op profiler", may_profile_ops=True)
    # The benchmark process imports these while conversions still run (devices/host_bench.py).
    bench_imports: tuple[str, ...] = ("numpy", "ai_edge_litert.interpreter", "nnlite_tui.core.runtimes.litert.interpreter")

    def __init__(self) -> None:
        self._tracker: PhaseTracker | None = None  # the worker's litert_torch phase hook, made once per worker process
        self._versions: dict[str, str] | None = None

    # ----- orchestrator -----
    def versions(self) -> dict[str, str]:
        if self._versions is None:  # read once: a key is made for every unit of a 10,000-model run
            self._versions = {name: dist_version(name) for name in ("litert-torch", "torch", "ai-edge-litert")}
        return dict(self._versions)

    def unavailable(self) -> str | None:
        missing = [name for name, version in self.versions().items() if version == "absent"]
        return f"LiteRT needs {', '.join(missing)} (pip install nnlite-tui)" if missing else None

    def refuses(self, backend: str, require_full_delegation: bool, on_device: bool) -> str | None:
        return None  # every backend, on the host and in the app

    def derivation(self, precision: str) -> list[Any]:
        from nnlite_tui.core.convert.worker.calibration import ACCURACY_SAMPLES
        from nnlite_tui.core.runtimes.litert.quantize import RECIPES, ROUTE

        return [ROUTE, RECIPES[precision], ACCURACY_SAMPLES, dist_version("ai-edge-quantizer")]

    def read_graph(self, path: str) -> Graph:
        from nnlite_tui.core.runtimes.litert.graph import read_graph

        return read_graph(path)

    def dense_chain(self, path: str, width: int, layers: int, seed: int) -> None:
        """Write the memory-bound reference model (dense_chain.py): FULLY_CONNECTED layers, seeded weights."""
        from nnlite_tui.core.runtimes.litert.dense_chain import write_dense_chain

        write_dense_chain(path, width, layers, seed)

    def app_extras(self, path: str) -> dict[str, str]:
        return {}  # the app reads a .tflite's inputs itself, in every protocol version

    # ----- conversion worker -----
    def worker_start(self) -> None:
        os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")
        from nnlite_tui.core.runtimes.litert.export import PhaseTracker

        if self._tracker is None:
            import litert_torch  # noqa: F401  (the 4-6 s import, paid once per worker)

            self._tracker = PhaseTracker()

    def export(self, prepared: Prepared, out_path: str, clock: PhaseClock) -> dict[str, object]:
        from nnlite_tui.core.runtimes.litert.export import export

        self.worker_start()
        assert self._tracker is not None  # made by worker_start
        return export(prepared, out_path, self._tracker, clock)

    def graph_work(self, path: str) -> GraphWork:
        from nnlite_tui.core.runtimes.litert.export import mac_work

        return mac_work(path)

    def run_artifact(self, path: str, samples: list[list[Any]]) -> list[list[Any]]:
        from nnlite_tui.core.runtimes.litert.validate import run_all

        return run_all(path, samples)

    def derive(self, job: dict[str, object]) -> dict[str, object]:
        from nnlite_tui.core.runtimes.litert.quantize import handle_derive

        return handle_derive(job)

    # ----- host benchmark process -----
    def host_backend(self, requested: str, path: str | None = None) -> tuple[str, str | None]:
        from nnlite_tui.core.runtimes.litert.interpreter import host_backend

        return host_backend(requested, path)

    def open_session(self, path: str, settings: BenchSettings) -> BenchSession:
        from nnlite_tui.core.runtimes.litert.interpreter import open_session

        return open_session(path, settings)

    def profile(self, path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> ProfiledBlocks:
        from nnlite_tui.core.runtimes.litert.profiled_pass import profiled_pass

        return profiled_pass(path, settings, ranges)


LITERT: Runtime = LiteRt()  # the type checker holds LiteRt to the Runtime protocol
