"""What a unit in flight is doing right now, from the phase lines in its log (core/progress.py).

Pure Python (no Textual). A conversion's worker and the host's benchmark process mark each phase as
it starts, with the seconds since their job began; the console knows when the line arrived. So the
job began at (arrival - seconds), a phase at (job start + its seconds), and the earlier phases took
the differences. An arrival is at most the log tailer's interval late (0.3 s), which the times shown
(whole seconds) absorb.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nnlite_tui.core.progress import PhaseMark
from nnlite_tui.tui.formatting import seconds

# How a phase is named on screen (the worker's names are the report's).
LABELS = {"build": "build", "reference": "reference", "export": "export", "lower": "lower",
          "convert": "convert", "serialize": "serialize", "validate": "validate", "hash": "hash",
          "derive": "derive", "load": "load", "warmup": "warm-up", "timed": "timed runs", "profile": "profiled pass",
          "on_device": "on the device"}


@dataclass
class LivePhases:
    """The phases one stage of one unit has reached, in order."""

    stage: str
    began: float  # wall time the job began
    marks: list[PhaseMark] = field(default_factory=list)

    def add(self, mark: PhaseMark) -> None:
        self.marks.append(mark)

    @property
    def current(self) -> PhaseMark:
        return self.marks[-1]

    def phase_started(self) -> float:
        return self.began + self.current.at_s

    def finished_phases(self) -> list[tuple[str, float]]:
        """(phase, seconds) of every phase before the current one."""
        return [(a.phase, max(0.0, b.at_s - a.at_s)) for a, b in zip(self.marks, self.marks[1:])]

    def describe(self, now: float) -> str:
        """`lower 12 s (from 14:03:51), job 41 s`, and for the timed runs what the budget leaves."""
        mark = self.current
        start = self.phase_started()
        text = (f"{LABELS.get(mark.phase, mark.phase)} {running(now - start)} "
                f"(from {time.strftime('%H:%M:%S', time.localtime(start))})")
        if mark.phase == "timed":
            text += budget_left(mark.figures, max(0.0, now - start))
        elif mark.phase == "on_device":
            text += budget_of(mark.figures)
        return text + f", job {running(now - self.began)}"

    def before(self) -> str:
        """`build 1.20 s, reference 400 ms, export 27.6 s`: what the phases before the current one took."""
        return ", ".join(f"{LABELS.get(p, p)} {seconds(s)}" for p, s in self.finished_phases())


def running(elapsed: float) -> str:
    """A clock that ticks every second: tenths while short, then whole seconds, then minutes."""
    elapsed = max(0.0, elapsed)
    if elapsed < 10:
        return f"{elapsed:.1f} s"
    return f"{elapsed:.0f} s" if elapsed < 120 else seconds(elapsed)


def budget_of(figures: dict[str, float]) -> str:
    runs, min_s, max_s = figures.get("runs"), figures.get("min_s"), figures.get("max_s")
    if runs is None or max_s is None:
        return ""
    return f", at least {runs:g} runs and {min_s or 0:g} s, at most {max_s:g} s"


def budget_left(figures: dict[str, float], elapsed: float) -> str:
    """The timed runs' budget: the cap's seconds left (exact), and the runs and seconds to go as the
    warm-up's mean predicts them (marked as an estimate)."""
    runs, min_s, max_s = figures.get("runs"), figures.get("min_s") or 0.0, figures.get("max_s")
    mean_ms = figures.get("warmup_mean_ms")
    if runs is None or max_s is None:
        return ""
    text = ""
    if mean_ms and mean_ms > 0:
        mean_s = mean_ms / 1000
        # Both floors (runs and seconds) must be met, then whichever cap (runs or seconds) comes first.
        total = min(max(runs, min_s / mean_s), figures.get("max_runs") or float("inf"), max_s / mean_s)
        done = min(total, elapsed / mean_s)
        text += (f", ~{done:.0f} of ~{total:.0f} runs, ~{running(total * mean_s - elapsed)} to go"
                 f" by the warm-up's {mean_ms:.3g} ms a run")
    text += f"; cap {max_s:g} s, {running(max_s - elapsed)} left"
    return text


def follow(phases: dict[str, LivePhases], model: str, stage: str, mark: PhaseMark, arrived: float) -> None:
    """Fold one phase line of `model` into `phases`: a new job (another stage, or seconds counted
    from zero again: a retry, a fresh benchmark process) starts a new list."""
    live = phases.get(model)
    if live is None or live.stage != stage or mark.at_s < live.current.at_s:
        live = phases[model] = LivePhases(stage, arrived - mark.at_s)
    live.add(mark)
