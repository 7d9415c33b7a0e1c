"""A run's conversion options, the stages a conversion can fail in, and the cache key they make."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.spec import ModelSpec

# Stages whose failure is a property of the model, not of the machine: cached, never retried in a loop.
# "sandbox": the model converted but did what model code may not (convert/sandbox: left a process running,
# tried the network); the same model does it again.
DETERMINISTIC_STAGES = ("import", "instantiate", "export", "lower", "serialize", "validate", "filtered",
                        "calibrate", "quantize", "sandbox")


@dataclass(frozen=True)
class ConvertOptions:
    timeout_s: float = 300.0
    mem_cap_mb: int = 0  # 0: from available memory (memory_cap.default_mem_cap_mb)
    recycle_after: int = 50
    nhwc: bool = True
    workers: int = 0  # 0 = choose from cores and free memory
    # Torch threads per worker; 0: adaptive (a job gets the cores the running jobs leave it). A
    # conversion is serial Python and MLIR: a 2-thread worker spends ~94% of its CPU on one thread,
    # so one 1-thread worker per core converts the most (bench/convert_parallelism.py, bench/README.md).
    threads_per_worker: int = 1
    cache_dir: Path | None = None
    use_cache: bool = True
    cache_max_gb: float | None = None  # None: $NNLITE_CACHE_MAX_GB, else the cache's default cap
    start_timeout_s: float = 180.0
    max_params: int | None = None
    # "dense": all-zero and duplicated weights are re-drawn before export (worker/dense_weights.py);
    # "as-built": the model's weights as its constructor left them.
    weights: str = "dense"
    # A pretrained checkpoint requested at construction: False builds the architecture with random
    # weights (the URL recorded, worker/random_weights.py); True fails it as a download, offline.
    strict_weights: bool = False
    # Full int8 (core/sources/units.py): synthetic representative inputs, or a directory of .npy/.npz arrays.
    calibration_samples: int = 32
    calibration_dir: Path | None = None
    # Where model code runs (convert/sandbox): "auto" the strongest isolation this machine allows, saying
    # so when it is less than the sandbox; "require" the sandbox or nothing; "off" as a plain subprocess
    # with the in-process offline guard only.
    sandbox: str = "auto"
    # Directories (or files) the run's model code is read from, visible in the sandbox from the start
    # (sandbox/sources.py); a model from elsewhere restarts its worker with its source added.
    sandbox_sources: tuple[str, ...] = ()
    sandbox_python_path: tuple[str, ...] = ()  # sys.path entries of module:factory models (PYTHONPATH inside)

    def cap_mb(self) -> int:
        if self.mem_cap_mb > 0:
            return self.mem_cap_mb
        from nnlite_tui.core.convert.memory_cap import default_mem_cap_mb

        return default_mem_cap_mb()

    def worker_count(self, n_models: int | None = None) -> int:
        if self.workers > 0:
            return self.workers
        import psutil

        by_cpu = max(1, (os.cpu_count() or 1))
        by_mem = max(1, int(psutil.virtual_memory().available / (self.cap_mb() * 2**20)))
        count = min(by_cpu, by_mem)
        return max(1, min(count, n_models)) if n_models else count


def cache_key(spec: ModelSpec, options: ConvertOptions, versions: dict[str, str], format_version: int) -> str:
    """The conversion's cache key: the spec's graph, the options that change the artifact, and the
    runtime's versions and output format (`versions`, `format_version`: runtimes.base.Runtime)."""
    # The task picks the inputs and alt_in_shapes the retry size: both change the result.
    payload = json.dumps([format_version, spec.key(), spec.task, [list(s) for s in spec.alt_in_shapes],
                          options.nhwc, options.max_params, options.weights, options.strict_weights, versions],
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()
