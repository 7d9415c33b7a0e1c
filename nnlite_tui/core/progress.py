"""Live progress of a unit inside a stage: one marked line in its log as each phase starts.

The process doing the work (the conversion worker, the host benchmark process) writes
`[nnlite] phase NAME +SECONDS s [key=value ...]` when a phase begins, SECONDS counted from the
start of its job. The conversion worker's lines go to the unit's log file, which the step's
LogTailer already streams as ModelLog events while the job runs; the host benchmark process's go
to its output, which the device forwards as they come. So the progress travels the way the log
does (into events.jsonl, to an attached console, and over a worker crash, whose file keeps the
phase it died in), with no second channel beside the worker's result.

The console reads them back with `parse_phase_line`: which phase runs, since when, and what the
earlier ones took. The key=values are figures the phase is measured against (the benchmark's
budget) or has just measured (the warm-up's mean), never estimates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK = "[nnlite] phase "
LINE = re.compile(r"^\[nnlite\] phase (?P<phase>[a-z_0-9-]+) \+(?P<at>\d+(?:\.\d+)?) s(?P<rest>(?: [a-z_0-9]+=\S+)*)\s*$")


@dataclass(frozen=True)
class PhaseMark:
    phase: str
    at_s: float  # seconds since the job began, on the clock of the process doing it
    figures: dict[str, float] = field(default_factory=dict)


def phase_line(phase: str, at_s: float, **figures: float | int) -> str:
    """The marked line for a phase that starts `at_s` seconds into the job."""
    extra = "".join(f" {key}={value:g}" if isinstance(value, float) else f" {key}={value}"
                    for key, value in figures.items())
    return f"{MARK}{phase} +{max(0.0, at_s):.2f} s{extra}"


def parse_phase_line(line: str) -> PhaseMark | None:
    """The PhaseMark in a log line written by phase_line(), or None for any other line."""
    if not line.startswith(MARK):
        return None
    match = LINE.match(line.rstrip())
    if match is None:
        return None
    figures = {}
    for pair in match["rest"].split():
        key, _, value = pair.partition("=")
        try:
            figures[key] = float(value)
        except ValueError:
            continue  # a figure this reader does not know how to read
    return PhaseMark(match["phase"], float(match["at"]), figures)
