"""The conversion step: convert one model (or take it from the cache) and say what happened.

It knows nothing of the run: no store, no queues, no control. The Runner applies its outcome.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nnlite_tui.core.convert.cache import is_disk_full
from nnlite_tui.core.convert.options import DETERMINISTIC_STAGES
from nnlite_tui.core.convert.record import ConversionRecord
from nnlite_tui.core.disk import takes_writes
from nnlite_tui.core.events import Event, StageFinished, StageStarted
from nnlite_tui.core.logs import LogTailer
from nnlite_tui.core.outcomes import Cancelled, ConversionResult, Converted, Failed, Outcome, Retry, Skipped
from nnlite_tui.core.spec import ModelSpec


class ConvertsModels(Protocol):
    """What the step needs of the converter (core.convert.Converter)."""

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> ConversionRecord: ...


@dataclass(frozen=True)
class Attempt:
    number: int
    max_attempts: int
    backoff_s: float

    @property
    def last(self) -> bool:
        return self.number >= self.max_attempts


def unit_fault(model: str, exc: Exception) -> ConversionRecord:
    """The failure of a unit whose result could not be handled (a deterministic stage: never retried)."""
    return {"ok": False, "stage": "sandbox", "error_type": "UnitFault", "cause": "protocol", "model": model,
            "error_message": f"handling this unit's conversion result failed: {type(exc).__name__}: "
                             f"{str(exc)[:200]}"}


def convert_step(spec: ModelSpec, converter: ConvertsModels, *, dest: Path, log_path: Path,
                 cancel: threading.Event, emit: Callable[[Event], None], attempt: Attempt) -> Outcome:
    emit(StageStarted(model=spec.name, stage="convert", attempt=attempt.number))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with LogTailer(log_path, spec.name, "convert", emit):
            raw = converter.convert(spec, dest, log_path, cancel=cancel)
        result = ConversionResult.from_converter(raw, seconds=time.monotonic() - started)
    except OSError:
        raise  # a refused write: the run's unit_faults tells the disk's from the unit's
    except Exception as exc:  # noqa: BLE001 - the unit fails alone, with the cause
        # What a worker sent is hostile data, checked field by field (messages.py); if handling one
        # unit's result still breaks, that unit fails, deterministically (a resume does not retry it
        # into the same fault), and the run goes on with the others.
        raw = unit_fault(spec.name, exc)
        result = ConversionResult.from_converter(raw, seconds=time.monotonic() - started)
    detail = "cached" if result.cached else (result.error.message if result.error else "") or ""
    emit(StageFinished(model=spec.name, stage="convert", ok=result.ok, seconds=result.seconds, detail=detail[:300],
                       phases=raw.get("phases")))
    if result.ok:
        return Converted(result)
    error = result.error
    assert error is not None  # a result that is not ok always names its stage
    if error.stage == "cancelled" or cancel.is_set():
        return Cancelled()
    # The disk's fault, not the model's: the run pauses and redoes the unit (run/unit_faults.py). A worker
    # that crashed while the run's folder takes no writes (its logs are there) crashed of that too.
    if is_disk_full(raw) or raw.get("error_type") == "DiskFull":
        raise OSError(errno.ENOSPC, f"{error.type}: {error.message}")
    if error.stage == "crash" and not takes_writes(log_path.parent):
        raise OSError(errno.ENOSPC, f"the conversion worker died while {log_path.parent} took no writes", str(log_path))
    if error.stage in ("filtered", "unsupported"):  # not the model's to run; "unsupported": convert/derive.py
        return Skipped(error=error, conversion=result)
    if error.stage not in DETERMINISTIC_STAGES and not attempt.last:
        return Retry(error=error, after_s=attempt.backoff_s * attempt.number, conversion=result)
    return Failed(error=error, conversion=result)
