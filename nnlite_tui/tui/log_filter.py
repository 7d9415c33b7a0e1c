"""What of a model's log the console shows: library deprecation noise once per run, then not again.

Converters print the same FutureWarning/DeprecationWarning (a `file:line: Category: message`
line, then the indented source line Python's warnings module adds) for every model. The console
shows each distinct warning the first time in the run and drops its repeats; the model's log
file (RUN_DIR/logs/<model>.log) keeps the full text.
"""

from __future__ import annotations

import re

NOISE = re.compile(r"^\S.*?:\d+: (?P<kind>FutureWarning|DeprecationWarning|PendingDeprecationWarning|"
                   r"UserWarning|RuntimeWarning|TracerWarning): (?P<message>.*)$")
SOURCE_LINE = re.compile(r"^\s{2,}\S")  # the warned-about source line printed under the warning
SEEN_KEPT = 1000  # distinct warnings remembered; more than that is not noise but a flood of its own


class LogFilter:
    """Decides line by line; one per run, shared by every model (the repeats are across models)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.hidden = 0  # repeats dropped in this run
        self._dropping: set[str] = set()  # models whose next indented line belongs to a dropped warning

    def keep(self, model: str, line: str) -> str | None:
        """The line to show (possibly marked), or None to leave it to the log file."""
        if model in self._dropping:
            self._dropping.discard(model)
            if SOURCE_LINE.match(line):
                return None
        match = NOISE.match(line)
        if match is None:
            return line
        key = f"{match['kind']}: {match['message']}"
        if key in self.seen:
            self.hidden += 1
            self._dropping.add(model)
            return None
        if len(self.seen) < SEEN_KEPT:
            self.seen.add(key)
        return f"[shown once per run] {line}"

    def keep_all(self, model: str, lines: list[str]) -> list[str]:
        """Lines read back from a log file: a library warning seen before (in the run or the file) is dropped."""
        kept = []
        local: set[str] = set()
        dropping = False
        for line in lines:
            if dropping and SOURCE_LINE.match(line):
                dropping = False
                continue
            dropping = False
            match = NOISE.match(line)
            if match is not None:
                key = f"{match['kind']}: {match['message']}"
                if key in self.seen or key in local:
                    dropping = True
                    continue
                local.add(key)
            kept.append(line)
        return kept
