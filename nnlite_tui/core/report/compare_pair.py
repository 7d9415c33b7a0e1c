"""One unit of two runs side by side: what compare.py decides about it and what its views read
(compare_energy.py, compare_format.py, remeasure.py), in a module of its own so that they need not
import compare.py for the type.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlite_tui.core.report.compare_sessions import SINGLE_SESSION, HostMove
from nnlite_tui.core.report.rows import ResultRow

ROUNDS, SINGLE_ROUND = "rounds", "single round"


@dataclass
class Pair:
    before: ResultRow
    after: ResultRow
    change: str
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    basis: str = ROUNDS  # ROUNDS, or SINGLE_ROUND when either side has one round
    p_value: float | None = None  # the rank test's, with rounds
    ci_within: tuple[float, float] | None = None  # the interval from the two sessions' own figures
    host: HostMove | None = None  # how far the device moved between the runs (two sessions)
    sessions: str = SINGLE_SESSION  # TWO_SESSIONS when both runs carry reference figures

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.before.key
