"""Numbers, flags and field spacing as the console writes them."""

from nnlite_tui.tui.formatting import byte_size, fields, line, milliseconds, seconds, shorten, sig3, spans, tiny, yes_no


def test_numbers_have_three_significant_digits_and_units():
    assert [sig3(v) for v in (1.82, 1.9, 0.57, 18.25, 182.4, 1820.2, 0)] == ["1.82", "1.90", "0.570", "18.2",
                                                                            "182", "1820", "0"]
    assert seconds(5.651615198000002) == "5.65 s" and seconds(0.0123) == "12.3 ms" and seconds(600) == "10m00s"
    assert milliseconds(1.9) == "1.90 ms" and milliseconds(None) == "-"
    assert tiny(8.568167686462402e-08) == "8.57e-08" and tiny(0.5) == "0.500" and tiny(0) == "0"
    assert byte_size(245_312) == "240 KiB" and byte_size(512) == "512 B"
    assert (yes_no(False), yes_no(True), yes_no(None)) == ("no", "yes", "-")


def test_no_span_starts_with_blanks_so_fields_never_run_together():
    parts = spans(("model_01", "bold"), "  done", ("  try 1", "dim"), ("  RUN ", "reverse"))
    # blanks move to the end of the part before; a painted part (reverse) keeps its own
    assert parts == [("model_01  ", "bold"), ("done  ", ""), ("try 1", "dim"), ("  RUN ", "reverse")]
    content = fields([("valid", ("yes", "$success")), ("device", "host"), ("emulator", yes_no(False))])
    assert content.plain == "valid yes  device host  emulator no"
    assert all(not content.plain[span.start:span.end].startswith(" ") for span in content.spans)
    assert line(("a", "bold"), "  b").plain == "a  b"


def test_shorten_keeps_both_ends_on_one_line():
    assert shorten("short", 10) == "short"
    cut = shorten("/dev/bus/usb/001/004/simulated-device-emulator-32399", 20)
    assert len(cut) == 20 and cut.startswith("/dev/bus/usb") and cut.endswith("32399") and "…" in cut
    assert shorten("first\nsecond", 20) == "first"
