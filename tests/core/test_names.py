"""A unit's name cut to a width keeps its start, the end of the model's name and its whole @ suffix."""

import pytest

from nnlite_tui.core.names import cut_middle, short_name, short_names

FRACTAL = "FractalNet-309422bb05fad9e6f97b0291b8f0dcb0"


def test_a_name_that_fits_is_left_alone():
    assert short_name("ga-128@int8", 11) == "ga-128@int8"
    assert cut_middle("abc", 3) == "abc"


def test_a_model_and_its_int8_unit_stay_apart_when_cut():
    plain, int8 = short_name(FRACTAL, 30), short_name(FRACTAL + "@int8", 30)
    assert (plain, int8) == ("FractalNet-309422bb…91b8f0dcb0", "FractalNet-30942…b8f0dcb0@int8")
    assert len(plain) == len(int8) == 30


@pytest.mark.parametrize("suffix", ["@int8", "@executorch", "@executorch@int8", "@dynamic-int8"])
def test_any_suffix_stays_whole_and_the_model_keeps_both_ends(suffix):
    cut = short_name(FRACTAL + suffix, 36)
    assert len(cut) == 36 and cut.endswith(suffix)
    model = cut[:-len(suffix)]
    head, tail = model.split("…")
    assert FRACTAL.startswith(head) and FRACTAL.endswith(tail) and head and tail


def test_two_models_of_one_family_stay_apart_by_the_end_of_their_hash():
    other = "FractalNet-309422bb05fad9e6f97b0291b8f0aaaa"
    assert short_name(FRACTAL, 20) != short_name(other, 20)


def test_too_narrow_for_the_suffix_cuts_the_whole_name_keeping_its_end():
    assert short_name(FRACTAL + "@executorch@int8", 12) == "Fractal…int8"
    assert short_name(FRACTAL + "@int8", 1) == "…"
    assert short_name(FRACTAL + "@int8", 0) == ""


def test_several_names_share_a_line_and_say_how_many_did_not_fit():
    names = [FRACTAL, FRACTAL + "@int8", "ga-128@int8"]
    line = short_names(names, 60)
    assert len(line) <= 60
    parts = line.split(", ")
    assert parts[2] == "ga-128@int8"  # a short name is not cut to make room it does not need
    assert parts[1].endswith("@int8") and parts[0] != parts[1].removesuffix("@int8")
    crowded = short_names(names + ["x" * 30, "y" * 40], 60)
    assert len(crowded) <= 60 and crowded.endswith("+2 more")
    assert short_names(["a", "b"], 10) == "a, b"


def test_headless_progress_line_fits_the_terminal_and_keeps_the_suffix(monkeypatch):
    import io

    from nnlite_tui.core.events import ModelStatus, RunStarted
    from nnlite_tui.core.run.console import ConsoleReporter

    monkeypatch.setenv("COLUMNS", "100")
    out = io.StringIO()
    reporter = ConsoleReporter(stream=out, progress=True)
    reporter.emit(RunStarted("runs/x", (FRACTAL, FRACTAL + "@int8"), ("host",)))
    reporter.emit(ModelStatus(FRACTAL + "@int8", "converting", attempt=1))
    line = out.getvalue().split("\r\x1b[2K")[-1]
    assert len(line) <= 99 and line.endswith("dcb0@int8") and "converting Fracta" in line


def test_status_lines_cut_the_units_name_in_its_middle():
    from nnlite_tui.commands.status_cmd import LINE_WIDTH, event_line
    from nnlite_tui.core.events import Recovery

    line = event_line(Recovery("retry", FRACTAL + "@int8", detail="convert: Timeout " + "x" * 200, ts=0))
    assert len(line) == LINE_WIDTH and line.endswith("…")
    assert "target=FractalNet-" in line and "@int8 detail=convert: Timeout" in line
