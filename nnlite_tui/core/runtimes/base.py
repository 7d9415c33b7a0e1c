"""The Runtime protocol: everything that is specific to one on-device runtime, behind one seam.

A runtime turns a prepared PyTorch model into its artifact inside the conversion worker (export,
lowering, serialization, validation against PyTorch) and derives precisions from it; it opens the
artifact for the host benchmark and profiles its ops; it reads the artifact's graph; and it names
the package versions that make its results (they enter the cache key and every report). The stages
above it speak of "the artifact" and call these methods; only runtimes/<name>/ imports a runtime's
own modules.

Three processes call into a runtime, and each method says where it runs: the orchestrator (light:
no torch, no converter), the conversion worker (torch imported), the host benchmark process (the
runtime's interpreter only). Implementations import their heavy modules inside the methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from nnlite_tui.core.bench.session import BenchSession
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.convert.phases import PhaseClock
    from nnlite_tui.core.convert.worker.model import Prepared
    from nnlite_tui.core.ops.graph import Graph


class RuntimeUnavailable(RuntimeError):
    """The runtime's packages are not installed here; the message says what to install."""


class Runtime(Protocol):
    name: str  # as written in unit names, reports, state and the app's `runtime` extra
    label: str  # as shown to people ("LiteRT")
    suffix: str  # the artifact's file suffix (".tflite")
    precisions: tuple[str, ...]  # the precisions it can derive, fp32 first
    format_version: int  # bump when the worker's output for the same inputs changes (cache key)
    library: str  # the distribution that runs its artifacts: its version is a report's runtime_version

    # ----- orchestrator -----
    def versions(self) -> dict[str, str]:
        """Installed versions of the packages its results depend on (cache key, reports)."""

    def unavailable(self) -> str | None:
        """Why this runtime cannot run here (a package missing), or None."""

    def derivation(self, precision: str) -> list[Any]:
        """What determines a derived precision's artifact beyond its fp32 one (recipe, route,
        accuracy inputs, quantizer version): part of the derived unit's cache key."""

    def read_graph(self, path: str) -> Graph:
        """The artifact's ops with their work (FLOPs, bytes moved); ops.graph.GraphError if unreadable
        (or when the artifact keeps no per-op graph the host can read)."""

    def app_extras(self, path: str) -> dict[str, str]:
        """What the benchmark app must be told about this artifact beyond the run's settings (protocol
        3's `runtime`, `input_shapes`, `input_dtypes`), read without torch; {} when the app needs nothing
        (so an app of an older protocol can still run it). ValueError names an unreadable artifact."""

    # ----- conversion worker -----
    def worker_start(self) -> None:
        """Import the converter once, when a worker starts."""

    def export(self, prepared: Prepared, out_path: str, clock: PhaseClock) -> dict[str, Any]:
        """Export, lower, serialize and validate `prepared` to `out_path`; the runtime's result fields.
        Raises convert.worker.errors.StageError naming the failing stage."""

    def derive(self, job: dict[str, Any]) -> dict[str, Any]:
        """A derived precision from the fp32 artifact (a whole result dict, never raising for the model)."""

    def graph_work(self, path: str) -> dict[str, Any]:
        """The artifact's MAC FLOPs read from its graph (`flops`, `flops_by_op`, or `flops_unmeasured`),
        for the compute check; run in a process that never imported model code."""

    def run_artifact(self, path: str, samples: list[list[Any]]) -> list[list[Any]]:
        """The artifact's outputs (numpy) on each check's inputs (numpy arrays, as the artifact takes
        them), for the validation; run in a process that never imported model code."""

    # ----- host benchmark process -----
    bench_imports: tuple[str, ...]  # modules the benchmark process imports before its model is known

    def host_backend(self, requested: str, path: str | None = None) -> tuple[str, str | None]:
        """The backend a host benchmark of the artifact at `path` uses for `requested`, and why it
        differs (None if it does not)."""

    def open_session(self, path: str, settings: BenchSettings) -> BenchSession:
        """Load the artifact for timing (bench.settings.BenchmarkError("load"|"allocate", ...)). The
        session's `reset_inputs` says whether inputs must be copied in before every inference."""

    def profile(self, path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> dict[str, Any]:
        """The profiled pass after the timed runs: result fields, `ops` (the per-op block) among them.
        Its inputs are the timed runs' own: the same seeded fill, integer inputs inside `ranges`."""
