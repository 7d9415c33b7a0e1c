"""A unit's record in the run's store, as the runner writes and reads it (the parts it reads).

The store keeps JSON documents; these say what the runner puts in a unit's: its overall status, and
under "devices" one entry per target device (or one shared entry, "*", with --distribute). Typed as
TypedDicts, they stay the plain dicts the store writes: no format changes with them.
"""

from __future__ import annotations

from typing import TypedDict, cast

from nnlite_tui.core.outcomes import StageError
from nnlite_tui.core.store import RunStore


class StoredError(TypedDict):
    """A StageError as stored (StageError.to_dict; StageError.from_dict reads it back)."""

    stage: str
    type: str | None
    message: str | None


class DeviceEntry(TypedDict, total=False):
    """One device's part of a unit: its attempts there, then its terminal result."""

    status: str
    attempts: int
    device: str  # the serial that ran it (under "*", whichever device took the unit)
    report: str
    median_ms: float | None
    error: StoredError | None
    flags: list[str]
    round: int  # the round being timed, or the last one finished (bench/rounds.py)
    rounds: int  # the rounds it needs (more while it is unstable)
    round_medians_ms: list[float]


class UnitRecord(TypedDict, total=False):
    name: str
    status: str
    stage: str
    attempts: int
    error: StoredError | None
    devices: dict[str, DeviceEntry]
    device: str | None
    median_ms: float | None
    flags: list[str]
    timings: dict[str, float]
    artifact: str | None
    report: str | None


def stored(error: StageError) -> StoredError:
    return {"stage": error.stage, "type": error.type, "message": error.message}


def unit_record(store: RunStore, name: str) -> UnitRecord:
    """The unit's record ({} before it has one): the store keeps what the runner wrote."""
    return cast(UnitRecord, store.get(name) or {})
