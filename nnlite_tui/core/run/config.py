"""RunConfig: the settings of one run, and which of them change results (checked on resume)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from nnlite_tui.core.run.artifacts import DEFAULT_KEEP
from nnlite_tui.core.bench.rounds import DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME


DEFAULT_BENCH = asdict(BenchSettings())
# Result settings that runs stored before they existed do not have: a resume at the default is the same run.
NEWER_DEFAULTS = {"rounds": DEFAULT_ROUNDS, "weights": "dense", "strict_weights": False}


class ResultSettings(TypedDict):
    """The settings that change what a report measures (RunConfig.result_settings), as stored."""

    bench: Mapping[str, object]  # BenchSettings' fields, less those left unset (see result_settings)
    nhwc: bool
    weights: str
    strict_weights: bool
    in_shape: list[int] | None
    num_classes: int | None
    rounds: int


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
    keep_artifacts: str = DEFAULT_KEEP  # which run-dir artifacts a terminal unit keeps (run/artifacts.py)
    min_free_bytes: int | None = None  # conversions wait below this much free disk (None: core.disk's default)
    # Not result settings: a resumed run may ask for more precisions or runtimes; each is its own unit.
    precisions: tuple[str, ...] = ("fp32",)
    runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)
    # Each unit is timed in `rounds` fresh processes (bench/rounds.py); an unstable one gets more, up to
    # `max_rounds`. The unit's timed budget (bench settings) is split across its rounds.
    rounds: int = DEFAULT_ROUNDS
    max_rounds: int = DEFAULT_MAX_ROUNDS

    def __post_init__(self) -> None:
        if self.rounds < 1 or self.max_rounds < self.rounds:
            raise ValueError(f"--rounds {self.rounds} must be at least 1 and at most --max-rounds {self.max_rounds}")

    def result_settings(self) -> ResultSettings:
        """Settings that change what a report measures; a resumed run must keep them."""
        return {
            # profile_ops and profile_runs add a separate pass after the timed runs, energy and
            # energy_seconds the energy windows; each left out while unset so runs stored before the
            # setting existed still resume.
            "bench": {k: v for k, v in asdict(self.bench).items()
                      if not (k in ("profile_ops", "profile_runs") and not self.bench.profile_ops)
                      and not (k in ("energy", "energy_seconds") and not self.bench.energy)},
            "nhwc": self.convert.nhwc,
            "weights": self.convert.weights,
            "strict_weights": self.convert.strict_weights,
            "in_shape": list(self.in_shape) if self.in_shape else None,
            "num_classes": self.num_classes,
            "rounds": self.rounds,
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
            "precisions": list(self.precisions),
            "runtimes": list(self.runtimes),
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
                if k not in stored_bench and new["bench"].get(k) == DEFAULT_BENCH.get(k):
                    continue  # a setting newer than the run, left at its default: the reports record it
                a, b = stored_bench.get(k), new["bench"].get(k)
                if a != b:
                    diffs.append(f"--{k.replace('_', '-')}: stored {a!r}, given {b!r}")
        elif key not in old and new.get(key) == NEWER_DEFAULTS.get(key):
            continue  # a setting newer than the run, left at its default: the reports record it
        elif old.get(key) != new.get(key):
            diffs.append(f"{key}: stored {old.get(key)!r}, given {new.get(key)!r}")
    return diffs
