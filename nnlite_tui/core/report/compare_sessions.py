"""What two runs made at different times cannot see in their own rounds: how far the device moved.

Each run keeps its devices' reference figures (core/bench/reference_record.py, references.json) and
each report the device's between-session spread (benchmark.between_session, from the device's
reference history). A comparison of two runs then:
- says how far each device moved between them: per reference, the ratio of the two runs' medians
  (after / before), with its noise, a 95% half-width on the log scale from the references' own
  spread within each run (normal approximation; 0 when a run has a single figure);
- widens the pair's interval by the between-session spread of both sides (half-width on the log
  scale sqrt(h^2 + (z * sqrt(sd_before^2 + sd_after^2))^2), each side of a skewed interval alike);
- widens the verdict's band by the largest move of any reference plus its noise, so that no unit is
  called slower or faster by less than the device itself moved.
Runs written before references.json existed have no such figures: their pairs are compared as
before and marked "single session".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.bench.reference_history import DEFAULT_SD_LOG, sd_log
from nnlite_tui.core.bench.reference_record import run_references
from nnlite_tui.core.results import Report

Z95 = 1.959963984540054
TWO_SESSIONS, SINGLE_SESSION, ONE_SESSION = "two sessions", "single session", "one session (re-measured)"
SAME_SESSION = "same session"  # both runs hold figures of one session (a copy of a run): nothing moved between them


@dataclass(frozen=True)
class HostMove:
    """How far one device moved between two runs, by its references."""

    device: str
    ratios: dict[str, float]  # per reference: median after / median before
    noise: dict[str, float]  # per reference: 95% half-width of the log ratio from the runs' own figures
    same_session: bool = False  # the runs share a session of this device (one is a copy of the other)

    @property
    def log_move(self) -> float:
        """The largest move of any reference, plus its noise, on the log scale (>= 0)."""
        return max((abs(math.log(r)) + self.noise.get(name, 0.0) for name, r in self.ratios.items()), default=0.0)

    @property
    def factor(self) -> float:
        return math.exp(self.log_move)

    def text(self) -> str:
        if not self.ratios:
            return f"{self.device}: no reference in both runs"
        if self.same_session:
            return f"{self.device}: both runs hold the same session's references (a copy): compared as one session"
        name = max(self.ratios, key=lambda n: abs(math.log(self.ratios[n])))
        r = self.ratios[name]
        way = f"{r:.2f}x slower" if r >= 1 else f"{1 / r:.2f}x faster"
        who = "host" if self.device == "host" else f"device {self.device}"
        noise = f"± {self.noise[name]:.1%}" if self.noise.get(name) else "(noise unknown: one figure in a run)"
        others = ", ".join(f"{n} {v:.3f}" for n, v in sorted(self.ratios.items()) if n != name)
        return (f"{who} {way} between these runs ({name} reference {r:.3f} {noise}"
                + (f"; {others}" if others else "") + f"); no verdict for a change under {self.factor:.3f}x "
                "beyond the threshold")


def _noise(before: list[float], after: list[float]) -> float:
    if len(before) < 2 or len(after) < 2:
        return 0.0
    sb, sa = sd_log(before) or 0.0, sd_log(after) or 0.0
    return Z95 * math.sqrt(sb ** 2 / len(before) + sa ** 2 / len(after))


def host_moves(before_dir: str | Path, after_dir: str | Path) -> dict[str, HostMove] | None:
    """Per device in both runs, how far it moved; None when either run has no reference figures."""
    before, after = run_references(before_dir), run_references(after_dir)
    if before is None or after is None:
        return None
    out = {}
    for serial in sorted(set(before) & set(after)):
        b, a = before[serial], after[serial]
        names = sorted(set(b) & set(a))
        shared = any(set(b[n]["sessions"]) & set(a[n]["sessions"]) for n in names)
        out[serial] = HostMove(serial, {n: a[n]["median_ns"] / b[n]["median_ns"] for n in names},
                               {n: _noise(b[n]["values_ns"], a[n]["values_ns"]) for n in names}, shared)
    return out


def between_sd(report: Report | None) -> float | None:
    """The report's between-session spread (`benchmark.between_session.sd_log`, bench/rounds.py), if any."""
    sd = report.benchmark.extra("between_session") if report is not None else None
    value = sd.get("sd_log") if isinstance(sd, dict) else None
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


def widen(ratio: float, ci: tuple[float, float], sd_before: float | None, sd_after: float | None,
          z: float = Z95) -> tuple[float, float]:
    """The pair's interval widened by both sides' between-session spread (the default for a side
    without one)."""
    sds = [sd for sd in (sd_before, sd_after) if sd is not None]
    both = math.hypot(sd_before if sd_before is not None else (sds[0] if sds else DEFAULT_SD_LOG),
                      sd_after if sd_after is not None else (sds[0] if sds else DEFAULT_SD_LOG))
    extra = z * both
    centre = math.log(ratio)
    lo = centre - math.hypot(centre - math.log(ci[0]), extra)
    hi = centre + math.hypot(math.log(ci[1]) - centre, extra)
    return math.exp(lo), math.exp(hi)
