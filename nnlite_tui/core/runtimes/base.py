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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic.json_schema import JsonDict

    from nnlite_tui.core.bench.block import ProfiledBlocks
    from nnlite_tui.core.bench.session import BenchSession
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.convert.phases import PhaseClock
    from nnlite_tui.core.convert.worker.model import Prepared
    from nnlite_tui.core.ops.graph import Graph


class _GraphWorkCommon(TypedDict):
    flops: int | None  # None: unmeasured
    flops_by_op: dict[str, int]  # MAC FLOPs per op type


class GraphWork(_GraphWorkCommon, total=False):
    """The artifact's multiply-accumulate FLOPs as its graph says (Runtime.graph_work)."""

    flops_unmeasured: str  # why the graph could not be read


class RuntimeUnavailable(RuntimeError):
    """The runtime's packages are not installed here; the message says what to install."""


@dataclass(frozen=True)
class AppEngine:
    """How the benchmark app (android-app/PROTOCOL.md) runs a runtime's artifacts: the host's checks of
    its reports and the simulated device (simdevice/) follow it."""

    backends: tuple[str, ...]  # the backends the app's engine takes (section 3a)
    # The artifact's delegates are fixed at export: the backend used is the artifact's, and the app names
    # the delegates without counting their nodes (require_full_delegation fails at load).
    fixed_delegates: bool
    no_ops_reason: str  # why the app's report has no per-op block (section 9e)
    may_profile_ops: bool  # an app build may profile its ops (the simulated app does, on the host)
    # Why the host must send input_shapes/input_dtypes (the engine cannot read them); None: it reads them.
    inputs_sent_why: str | None = None
    # What a valid app report of this runtime holds beyond the common schema (results/app_report.py):
    # a JSON Schema `then` (a schema fragment, written as JSON Schema spells it), and its `description`;
    # {} when nothing.
    report_rule: JsonDict = field(default_factory=dict)  # a JSON Schema fragment
    report_rule_why: str = ""


class Runtime(Protocol):
    name: str  # as written in unit names, reports, state and the app's `runtime` extra
    label: str  # as shown to people ("LiteRT")
    suffix: str  # the artifact's file suffix (".tflite"): in run directories and the conversion cache
    app: AppEngine | None  # how the benchmark app runs it; None: the app cannot (host only)
    precisions: tuple[str, ...]  # the precisions it can derive, fp32 first
    format_version: int  # bump when the worker's output for the same inputs changes (cache key)
    library: str  # the distribution that runs its artifacts: its version is a report's runtime_version
    converter: str  # the distribution that makes its artifacts from PyTorch (shown as the converter's version)
    # The environment variables its converter reads, by exact name: a conversion sandbox passes them in
    # from the user's environment (convert/sandbox/launch.py), as it does torch's own.
    converter_env: tuple[str, ...]
    # Path fragments of its converter's frames in a traceback ("/pkg/"): tracing machinery, passed over
    # when an export error is blamed on the construct that raised it (convert/worker/construct.py).
    converter_frames: tuple[str, ...]

    # ----- orchestrator -----
    def versions(self) -> dict[str, str]:
        """Installed versions of the packages its results depend on (cache key, reports)."""

    def unavailable(self) -> str | None:
        """Why this runtime cannot run here (a package missing), or None."""

    def refuses(self, backend: str, require_full_delegation: bool, on_device: bool) -> str | None:
        """Why a run with these benchmark settings cannot run this runtime's units (said before the run
        starts, not unit by unit; `on_device`: a device other than the host is in the run), or None."""

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

    # The conversion worker's results are JSON fields that the runner checks field by field when it reads
    # them (convert.messages.result, into WorkerResult); a runtime adds its own beside the common ones.
    def export(self, prepared: Prepared, out_path: str, clock: PhaseClock) -> dict[str, object]:
        """Export, lower, serialize and validate `prepared` to `out_path`; the runtime's result fields.
        Raises convert.worker.errors.StageError naming the failing stage."""

    def derive(self, job: dict[str, object]) -> dict[str, object]:
        """A derived precision from the fp32 artifact (a whole result dict, never raising for the model);
        `job` is the derivation job's JSON (runtimes/derive_job.py)."""

    def graph_work(self, path: str) -> GraphWork:
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

    def profile(self, path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> ProfiledBlocks:
        """The profiled pass after the timed runs: result fields, `ops` (the per-op block) among them.
        Its inputs are the timed runs' own: the same seeded fill, integer inputs inside `ranges`."""
