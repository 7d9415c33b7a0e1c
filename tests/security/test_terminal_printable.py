"""printable(): every control a terminal acts on is shown as a visible escape, plain text is untouched;
and the console's queue cells and log lines go through it."""

from __future__ import annotations

import pytest

from nnlite_tui.core.text_safety import printable

PLAIN = ["resnet18@int8", "ab/nn/stat/run: img-classification_AlexNet", "naïve 模型 — ok ✓", "tab\there"]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_text_is_unchanged(text):
    assert printable(text) == text


@pytest.mark.parametrize("raw, shown", [
    ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),  # OSC: window title
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # CSI: clear screen, cursor home
    ("\x9b31m", "\\x9b31m"),  # C1 CSI in one character
    ("a\rb", "a\\x0db"),  # carriage return: would overwrite the line
    ("\x00\x08\x7f", "\\x00\\x08\\x7f"),
    ("abc\u202eexe.txt", "abc\\u202eexe.txt"),  # right-to-left override
    ("\u2066x\u2069\u200f", "\\u2066x\\u2069\\u200f"),
    ("two\nlines", "two\\nlines"),
])
def test_controls_are_shown_as_escapes(raw, shown):
    assert printable(raw) == shown


def test_newlines_stay_where_asked():
    assert printable("one\n\x1b[2Jtwo", keep_newlines=True) == "one\n\\x1b[2Jtwo"


def test_every_code_point_that_a_terminal_acts_on_is_escaped():
    for code in [*range(0x00, 0x20), *range(0x7f, 0xa0)]:
        if chr(code) != "\t":
            assert all(0x20 <= ord(ch) < 0x7f for ch in printable(chr(code))), hex(code)


def test_the_console_queue_and_log_pane_show_no_control_characters():
    from rich.style import Style

    from nnlite_tui.tui.widgets.log_pane import clean
    from nnlite_tui.tui.widgets.queue_rows import Column, draw_cells

    class Frame:
        scroll_x, width, header = 0, 80, Style()

    strip = draw_cells([Column("model", "model", 40)], [("evil\x1b]0;pwned\x07\x9b2J\u202e", Style())], Style(),
                       Frame())
    drawn = "".join(segment.text for segment in strip)
    assert "evil\\x1b]0;pwned\\x07\\x9b2J\\u202e" in drawn
    assert clean("\x1b]0;pwned\x07 \x9b2J \u202eabc") == "]0;pwned \\x9b2J \\u202eabc"
