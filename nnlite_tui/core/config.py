"""RunConfig: the settings of one run, and which of them change results (checked on resume)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nnlite_tui.core.artifacts import DEFAULT_KEEP
from nnlite_tui.core.bench import BenchSettings
from nnlite_tui.core.convert import ConvertOptions


class ConfigMismatch(ValueError):
    """A resumed run was given settings that would make its reports incomparable."""


@dataclass
class RunConfig:
    sources: list[str]
    out: Path
    devices: list[str] = field(default_factory=lambda: ["host"])
    bench: BenchSettings = field(default_factory=BenchSettings)
    convert: ConvertOptions = field(default_factory=ConvertOptions)
    in_shape: tuple[int, ...] | None = None
    num_classes: int | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    limit: int | None = None
    max_params: int | None = None
    max_attempts: int = 3
    backoff_s: float = 2.0
    cooldown_s: float = 10.0
    cooldown_temp: float | None = None
    distribute: bool = False  # spread models over devices instead of running each on every device
    lookahead: int = 3  # converted models waiting for a device, at most
    isolation: str = "pause"  # how host benchmarks are kept from sharing the CPU (see isolation.py)
    retry_failed: bool = False
    force_config: bool = False
    allow_reexec: bool = False  # last-resort recovery: re-exec the process (headless CLI only)
    apk: str | None = None
    keep_tflite: str = DEFAULT_KEEP  # which run-dir .tflite files a terminal model keeps (core.artifacts)
    min_free_bytes: int | None = None  # conversions wait below this much free disk (None: core.disk's default)

    def result_settings(self) -> dict[str, Any]:
        """Settings that change what a report measures; a resumed run must keep them."""
        return {
            # profile_ops and profile_runs add a separate pass after the timed runs; left out while unset
            # so runs stored before the setting existed still resume.
            "bench": {k: v for k, v in asdict(self.bench).items()
                      if not (k in ("profile_ops", "profile_runs") and not self.bench.profile_ops)},
            "nhwc": self.convert.nhwc,
            "in_shape": list(self.in_shape) if self.in_shape else None,
            "num_classes": self.num_classes,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "devices": list(self.devices),
            "include": list(self.include),
            "exclude": list(self.exclude),
            "limit": self.limit,
            "max_params": self.max_params,
            "max_attempts": self.max_attempts,
            "distribute": self.distribute,
            "result_settings": self.result_settings(),
        }


def check_resume(stored: dict[str, Any] | None, cfg: RunConfig) -> list[str]:
    """Differences between a stored run config and this one, as human-readable lines."""
    if not stored:
        return []
    old = stored.get("result_settings") or {}
    new = cfg.result_settings()
    diffs = []
    for key in sorted(set(old) | set(new)):
        if key == "bench":
            stored_bench = old.get("bench") or {}
            for k in sorted(set(stored_bench) | set(new["bench"])):
                if k not in stored_bench:
                    continue  # a setting newer than the run: its reports record the value they used
                a, b = stored_bench.get(k), new["bench"].get(k)
                if a != b:
                    diffs.append(f"--{k.replace('_', '-')}: stored {a!r}, given {b!r}")
        elif old.get(key) != new.get(key):
            diffs.append(f"{key}: stored {old.get(key)!r}, given {new.get(key)!r}")
    return diffs
