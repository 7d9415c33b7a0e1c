"""What a benchmark measures: its settings (the device protocol's extras), and its error shape.

The protocol itself (the timed loop and the result block) is protocol.py; every device and every
runtime reads the same settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

BACKENDS = ("xnnpack", "cpu", "gpu", "nnapi")
PROFILE_MODES = (None, "xnnpack", "builtin", "both")
# Settings of the profiled pass: optional extras of the device protocol, not settings of the app's
# benchmark (android-app/PROTOCOL.md, section 9e).
HOST_ONLY_SETTINGS = ("profile_ops", "profile_runs")
# The app's energy extras (android-app/PROTOCOL.md section 9f), whose defaults it keeps beside its
# benchmark's (protocol.json runtime_defaults): the energy windows after the timed runs.
ENERGY_SETTINGS = ("energy", "energy_seconds")


class SettingsDict(TypedDict):
    """BenchSettings as the benchmark process's arguments and a report's `benchmark.settings` hold them."""

    warmup: int
    runs: int
    min_seconds: float
    max_runs: int
    max_seconds: float
    threads: int
    backend: str
    seed: int
    warmup_seconds: float
    require_full_delegation: bool
    profile_ops: str | None
    profile_runs: int
    energy: bool
    energy_seconds: float


@dataclass(frozen=True)
class BenchSettings:
    warmup: int = 5
    runs: int = 50
    min_seconds: float = 1.0
    max_runs: int = 10_000
    max_seconds: float = 60.0
    threads: int = 1
    backend: str = "xnnpack"
    seed: int = 0
    # As LiteRT's benchmark_model (--warmup_min_secs): warm up by time as well as by count.
    warmup_seconds: float = 0.5
    # As benchmark_model's --require_full_delegation: fail when a delegate takes only part of the graph.
    require_full_delegation: bool = False
    # After the timed runs, a separate profiled pass: "xnnpack", "builtin" or "both" kernel modes.
    profile_ops: str | None = None
    profile_runs: int = 20
    energy: bool = False
    energy_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.runs < 1 or self.min_seconds < 0 or self.threads < 1:
            raise ValueError(f"invalid benchmark settings: {self}")
        if not (math.isfinite(self.warmup_seconds) and self.warmup_seconds >= 0):
            raise ValueError(f"warmup_seconds must be a finite number >= 0, got {self.warmup_seconds}")
        if self.max_runs < self.runs:
            raise ValueError(f"max_runs {self.max_runs} below runs {self.runs}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend {self.backend!r} not one of {BACKENDS}")
        if self.profile_ops not in PROFILE_MODES:
            raise ValueError(f"profile_ops {self.profile_ops!r} not one of {PROFILE_MODES}")

    def to_dict(self) -> SettingsDict:
        return {"warmup": self.warmup, "runs": self.runs, "min_seconds": self.min_seconds, "max_runs": self.max_runs,
                "max_seconds": self.max_seconds, "threads": self.threads, "backend": self.backend, "seed": self.seed,
                "warmup_seconds": self.warmup_seconds, "require_full_delegation": self.require_full_delegation,
                "profile_ops": self.profile_ops, "profile_runs": self.profile_runs, "energy": self.energy,
                "energy_seconds": self.energy_seconds}


class BenchmarkError(Exception):
    def __init__(self, stage: str, error: BaseException | str):
        self.stage = stage
        if isinstance(error, BaseException):
            self.error_type = f"{type(error).__module__}.{type(error).__name__}"
            self.message = first_line(str(error)) or type(error).__name__
        else:
            self.error_type = "BenchmarkError"
            self.message = error
        super().__init__(f"{stage}: {self.message}")


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


