"""A third runtime for tests/results/test_fake_runtime.py: only what the result views need of one
(its name, label and artifact suffix); it converts and runs nothing."""

from __future__ import annotations

from typing import Any

from nnlite_tui.core.runtimes.base import AppEngine, Runtime


class FakeRt:
    name = "fakert"
    label = "FakeRT"
    suffix = ".fake"
    precisions: tuple[str, ...] = ("fp32",)
    format_version = 1
    library = "fakert"
    converter = "fakert"
    converter_env: tuple[str, ...] = ()
    converter_frames: tuple[str, ...] = ()
    app: AppEngine | None = None  # the benchmark app cannot run it: host only
    bench_imports: tuple[str, ...] = ()

    def versions(self) -> dict[str, str]:
        return {"fakert": "0.0"}

    def unavailable(self) -> str | None:
        return "a test runtime: it converts and runs nothing"

    def refuses(self, backend: str, require_full_delegation: bool, on_device: bool) -> str | None:
        return None

    def derivation(self, precision: str) -> list[Any]:
        return []

    def read_graph(self, path: str) -> Any:
        raise NotImplementedError

    def app_extras(self, path: str) -> dict[str, str]:
        return {"runtime": self.name}

    def worker_start(self) -> None:
        pass

    def export(self, prepared: Any, out_path: str, clock: Any) -> dict[str, Any]:
        raise NotImplementedError

    def derive(self, job: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def graph_work(self, path: str) -> dict[str, Any]:
        raise NotImplementedError

    def host_backend(self, requested: str, path: str | None = None) -> tuple[str, str | None]:
        return requested, None

    def open_session(self, path: str, settings: Any) -> Any:
        raise NotImplementedError

    def profile(self, path: str, settings: Any, ranges: Any = ()) -> dict[str, Any]:
        return {}


FAKERT: Runtime = FakeRt()
