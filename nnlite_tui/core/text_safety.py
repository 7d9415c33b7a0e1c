"""Text that a model controls (its file name, its error message, anything a worker or a device reported),
made safe for a terminal: the one function every terminal output goes through.

A terminal acts on control characters: ESC starts sequences that set the window title (OSC), clear
the screen or move the cursor (CSI), write to the clipboard (OSC 52) or make links; BEL rings; a
bare CR overwrites the line it is on; C1 controls (U+0080-U+009F) are the same sequences in one
character; bidirectional overrides (U+202A-U+202E, U+2066-U+2069) make text read in another order
than it runs. printable() shows each of them as a visible escape (ESC as `\\x1b`, U+202E as
`\\u202e`), so that the operator sees that something was there and what, and the terminal acts on
none of it. Tab stays (it only moves the cursor right); newlines stay only where the caller shows
several lines (a log pane), else they become `\\n`.

Reports and state files keep the text as it was: JSON escapes it there.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls; line/paragraph separators; bidi marks and overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    ch = found.group(0)
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """str(text) with every control character a terminal would act on shown as an escape instead."""
    out = _UNSAFE.sub(_escape, str(text))
    return out if keep_newlines else out.replace("\n", "\\n")
