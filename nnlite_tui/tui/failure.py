"""A failure on one line that says why: stage, cause, decisive line; the exception's class last.

A unit's error is stored as "stage: Type: message" (core/outcomes.error_text), sometimes followed
by more lines (a traceback's end, a converter's complaint). In a 30-character column the class
name came first and left "export: SamplesAtInference: …": the words that said why were cut. Here
the message comes right after the stage, then the decisive later line (the last one that is not
a traceback frame), and the class only if room is left.
"""

from __future__ import annotations

import re

from nnlite_tui.core.outcomes import without_module_path

_TYPE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Failure|Timeout|Exit|Interrupt|[A-Z]\w+)$")
_FRAME = re.compile(r'^(File "|Traceback \(|During handling|The above exception|\^+$|~+$)')


def split_error(error: str) -> tuple[str, str, str, str]:
    """(stage, class, message, decisive later line) of a stored error; parts not present are ''."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return "", "", "", ""
    parts = without_module_path(lines[0]).split(": ", 2)
    stage = kind = ""
    if len(parts) >= 2 and " " not in parts[0]:
        stage, parts = parts[0], parts[1:]
    if len(parts) >= 2 and _TYPE.match(parts[0]):
        kind, parts = parts[0], parts[1:]
    message = ": ".join(parts)
    later = [line for line in lines[1:] if not _FRAME.match(line)]
    decisive = later[-1] if later else ""
    if decisive in message:  # the later line says nothing the first did not
        decisive = ""
    elif message in decisive:  # ... or says all of it, and more
        message, decisive = decisive, ""
    return stage, kind, message, decisive


def cause_line(error: str | None) -> str:
    """One line: `stage: message — decisive line (Class)`; '' for no error."""
    if not error:
        return ""
    stage, kind, message, decisive = split_error(error)
    text = f"{stage}: {message or kind}" if stage else (message or kind)
    if decisive:
        text += f" — {decisive}"
    if kind and message:
        text += f" ({kind})"
    return " ".join(text.split())
