"""ExecuTorch (.pte): torch.export + the XNNPACK partitioner convert, ExecuTorch's runtime runs.

The Runtime protocol's implementation for ExecuTorch (the `executorch` extra). The modules beside this
one are its internals: export.py / delegation.py / validate.py (PyTorch -> .pte in the worker),
quantize.py (int8 through the XNNPACK quantizer), session.py (the host benchmark session on the C++
binding), etdump.py (per-op profiles from ETDump) and program.py (the .pte's inputs and delegates,
read without ExecuTorch). Nothing outside this package imports them; everything goes through
EXECUTORCH below.

Precisions: fp32 and int8. fp16 and dynamic-range int8 units are skipped as "not supported by this
runtime" (ExecuTorch's XNNPACK path has no fp16-weight recipe here, and its dynamic quantization
is a different recipe from LiteRT's; neither is made rather than made differently).
"""

from __future__ import annotations

import importlib.util
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

# Bump when the worker's output for the same inputs changes (invalidates the cache).
FORMAT_VERSION = 5  # 5: models that draw at inference converted with their draws (convert/worker/stochastic.py); 4: the program's MAC FLOPs for the compute check (work.py); 3: token ranges in input_signature, detection backbone+head cut, dense weights; 2: the exact rewrites (adaptive_max_pool2d, bilinear) every export uses
INSTALL_HINT = "pip install 'nnlite-tui[executorch]' (make install includes it)"
# The app's ExecuTorch engine (android-app/PROTOCOL.md sections 3a, 9c, 9e).
APP_ENGINE = AppEngine(
    backends=("xnnpack",), fixed_delegates=True,
    no_ops_reason=("the published ExecuTorch Android library is built without its event tracer, so Module.etdump() "
                   "records no per-op events"),
    may_profile_ops=False, inputs_sent_why="its Java API cannot read a program's input shapes",
    report_rule_why=("ExecuTorch (protocol 3): the program's delegates are fixed at export, so only xnnpack can be "
                     "asked for; a program without the XNNPACK delegate reports cpu; the wall clock is Module.forward"
                     " on the device (Method.execute for ExecuTorch's Python runtime in the simulator) and there is "
                     "no native clock"),
    report_rule={"properties": {
        "backend_requested": {"const": "xnnpack"}, "backend_used": {"enum": ["xnnpack", "cpu"]},
        "timing": {"properties": {"wall_clock": {"enum": ["Module.forward", "Method.execute"]},
                                  "native_clock": {"const": None}}},
        "native_stats": {"const": None}, "native_samples_ns": {"const": None},
        "delegation": {"properties": {"source": {"const": "method metadata"}}, "required": ["backends"]}}})


class ExecuTorch:
    name = "executorch"
    label = "ExecuTorch"
    suffix = ".pte"
    precisions: tuple[str, ...] = ("fp32", "int8")
    format_version = FORMAT_VERSION
    library = "executorch"
    converter = "executorch"
    converter_env: tuple[str, ...] = ()
    converter_frames: tuple[str, ...] = ()
    app: AppEngine | None = APP_ENGINE
    # The benchmark process needs only the C++ binding (0.01 s after torch), never executorch.exir (8 s).
    bench_imports: tuple[str, ...] = ("numpy", "torch", "executorch.extension.pybindings._C",
                     "nnlite_tui.core.runtimes.executorch.session")

    def __init__(self) -> None:
        self._versions: dict[str, str] | None = None
        self._started = False

    # ----- orchestrator -----
    def versions(self) -> dict[str, str]:
        if self._versions is None:
            self._versions = {name: dist_version(name) for name in ("executorch", "torch", "torchao")}
        return dict(self._versions)

    def unavailable(self) -> str | None:
        missing = [name for name in ("executorch", "torch") if self.versions()[name] == "absent"
                   or importlib.util.find_spec(name) is None]
        return f"ExecuTorch is not installed here (missing {', '.join(missing)}): {INSTALL_HINT}" if missing else None

    def refuses(self, backend: str, require_full_delegation: bool, on_device: bool) -> str | None:
        if backend != "xnnpack":
            return (f"--backend {backend} with --runtime executorch: an ExecuTorch program's delegates are fixed at "
                    "export (nnlite exports XNNPACK); use --backend xnnpack, or run the other backends with "
                    "--runtime litert")
        if require_full_delegation and on_device:
            return ("--require-full-delegation with --runtime executorch on a device: the benchmark app's ExecuTorch "
                    "API names a program's delegates but not how many nodes they took; run it on the host (which "
                    "reads the program's plan) or with --runtime litert")
        return None

    def derivation(self, precision: str) -> list[Any]:
        from nnlite_tui.core.convert.worker.calibration import ACCURACY_SAMPLES
        from nnlite_tui.core.runtimes.executorch.quantize import RECIPE, ROUTE

        return [ROUTE, RECIPE, ACCURACY_SAMPLES, self.versions()]

    def read_graph(self, path: str) -> Graph:
        from nnlite_tui.core.ops.graph import GraphError

        raise GraphError(f"{path}: an ExecuTorch program keeps its XNNPACK partitions' ops inside the delegate's "
                         "blob; nnlite reads no per-op graph (FLOPs, bytes) from a .pte")

    def app_extras(self, path: str) -> dict[str, str]:
        import json

        from nnlite_tui.core.runtimes.executorch.program import read_program

        facts = read_program(path)  # ProgramError is a ValueError naming the file
        return {"runtime": self.name, "input_shapes": json.dumps(facts.input_shapes, separators=(",", ":")),
                "input_dtypes": json.dumps(facts.input_dtypes, separators=(",", ":"))}

    # ----- conversion worker -----
    def worker_start(self) -> None:
        if self._started:
            return
        import executorch.exir  # noqa: F401  (the 8 s import, paid once per worker)
        from executorch.extension.pybindings import _C

        # One XNNPACK thread, as torch has in the worker, set before any program is loaded: the pool
        # cannot change once one is (runtimes/executorch/session.py).
        if _C._threadpool_get_thread_count() != 1:
            _C._unsafe_reset_threadpool(1)
        self._started = True

    def export(self, prepared: Prepared, out_path: str, clock: PhaseClock) -> dict[str, object]:
        from nnlite_tui.core.runtimes.executorch.export import export, release_caches

        self.worker_start()
        try:
            return export(prepared, out_path, clock)
        finally:
            release_caches()

    def graph_work(self, path: str) -> GraphWork:
        from nnlite_tui.core.runtimes.executorch.work import mac_work

        return mac_work(path)

    def run_artifact(self, path: str, samples: list[list[Any]]) -> list[list[Any]]:
        import torch

        from nnlite_tui.core.runtimes.executorch.validate import run_all

        outputs = run_all(path, [tuple(torch.from_numpy(a) for a in sample) for sample in samples])
        return [[o.detach().numpy() for o in run] for run in outputs]

    def derive(self, job: dict[str, object]) -> dict[str, object]:
        from nnlite_tui.core.runtimes.executorch.export import release_caches
        from nnlite_tui.core.runtimes.executorch.quantize import handle_derive

        self.worker_start()
        try:
            return handle_derive(job)
        finally:
            release_caches()

    # ----- host benchmark process -----
    def host_backend(self, requested: str, path: str | None = None) -> tuple[str, str | None]:
        from nnlite_tui.core.runtimes.executorch.session import host_backend

        return host_backend(requested, path)

    def open_session(self, path: str, settings: BenchSettings) -> BenchSession:
        from nnlite_tui.core.runtimes.executorch.session import open_session

        return open_session(path, settings)

    def profile(self, path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> ProfiledBlocks:
        from nnlite_tui.core.runtimes.executorch.etdump import profiled_pass

        return profiled_pass(path, settings, ranges)


EXECUTORCH: Runtime = ExecuTorch()  # the type checker holds ExecuTorch to the Runtime protocol
