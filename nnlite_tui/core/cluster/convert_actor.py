"""The conversion actor: core.convert's local worker machinery on whichever node Ray places it.

Each actor owns one Converter with one worker process, so the memory cap, timeout, recycling and
process-group kill behave exactly as on one machine. It never caches (the driver does) and keeps
nothing: the artifact goes back as object-store pieces and the scratch copy is removed. Its result
goes back as JSON text, which the driver checks field by field and whose artifact it hashes again.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TypedDict

import ray

from nnlite_tui.core.cluster import session, transfer
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime
from nnlite_tui.core.spec import ModelSpec, SpecDict


class Placement(TypedDict):
    """Where a conversion actor runs, and its default runtime's versions there."""

    node_id: str
    node: str
    versions: dict[str, str]


# convert() in one thread; cancel/pause/where meanwhile. Ray's stubs lack the actor options.
@ray.remote(num_cpus=1, max_concurrency=4)  # type: ignore[call-overload]
class ConvertActor:
    def __init__(self, options: ConvertOptions):
        self.scratch = Path(tempfile.mkdtemp(prefix="nnlite-convert-"))
        opts = replace(options, cache_dir=self.scratch / "cache", use_cache=False, workers=1)
        self.converter = Converter(opts, log_dir=self.scratch, n_workers=1)
        self._cancel = threading.Event()

    def where(self) -> Placement:
        return {"node_id": ray.get_runtime_context().get_node_id(), "node": session.node_name(),
                "versions": get_runtime(DEFAULT_RUNTIME).versions()}

    def prestart(self) -> None:
        self.converter.prestart()

    def convert(self, spec: SpecDict) -> tuple[str, list, str]:
        """(result as JSON text, artifact pieces, log text) for one model."""
        model = ModelSpec.from_dict(spec)
        dest, log = self._start_job()
        started = time.monotonic()
        result = self.converter.convert(model, dest, log, cancel=self._cancel)
        return self._finish_job(result, dest, log, started)

    def run_job(self, key: str, job: ConversionJob, fp32_pieces: list) -> tuple[str, list, str]:
        """A derivation job (the driver's convert.derive.derive_variant) on the fp32 artifact sent with it."""
        dest, log = self._start_job()
        source = self.scratch / f"fp32-source{Path(job['fp32_path']).suffix}"
        started = time.monotonic()
        try:
            transfer.write_file(fp32_pieces, source)
            result = self.converter.cached_job(key, {**job, "fp32_path": str(source), "log_path": str(log)}, dest,
                                               log, cancel=self._cancel)
        finally:
            source.unlink(missing_ok=True)
        return self._finish_job(result, dest, log, started)

    def _start_job(self) -> tuple[Path, Path]:
        self._cancel.clear()
        log = self.scratch / "job.log"
        log.write_text("")
        return self.scratch / "out.artifact", log

    def _finish_job(self, result: ConversionRecord, dest: Path, log: Path, started: float) -> tuple[str, list, str]:
        result["actor_seconds"] = round(time.monotonic() - started, 4)  # the cluster's cost is the rest
        chunks: list = []
        if result.get("ok"):
            chunks = transfer.put_file(dest)
            result["node"] = session.node_name()
        dest.unlink(missing_ok=True)
        key = result.get("key")
        stored = self.converter.cache.artifact_of(key) if key else None
        if stored is not None:
            stored.unlink(missing_ok=True)
        # Data, not objects: the driver parses and checks it (convert/messages.py) as it does a worker's.
        return json.dumps(result, default=str), chunks, log.read_text(errors="replace")

    def cancel(self) -> None:
        self._cancel.set()

    def pause(self) -> None:
        self.converter.pause_workers()

    def resume(self) -> None:
        self.converter.resume_workers()

    def kill_all(self) -> None:
        self.converter.kill_all()

    def close(self) -> None:
        self.converter.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
