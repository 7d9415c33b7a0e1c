"""The HTML report's reader lifts the raw samples out of a report's bytes: the same report and samples
as a plain JSON parse, whatever the layout, and a plain parse whenever the cut would be unsure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nnlite_tui.core.report.report_bytes import numbers, read_report_bytes


def report(**benchmark) -> dict:
    return {"model_name": "m", "valid": True, "benchmark": {"median_ns": 5, **benchmark}, "tool": {"nnlite": "1"}}


def write(tmp_path: Path, data: dict | str, indent: int | None = None) -> Path:
    path = tmp_path / "r.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=indent))
    return path


@pytest.mark.parametrize("indent", [None, 1])
def test_the_samples_come_out_as_integers_and_the_native_ones_are_dropped(tmp_path, indent):
    path = write(tmp_path, report(samples_ns=[3, 1, 2], native_samples_ns=[9, 9, 9], stats={"count": 3}), indent)
    parsed, samples = read_report_bytes(path)
    assert samples.dtype == np.int64 and samples.tolist() == [3, 1, 2]
    assert parsed == {"model_name": "m", "valid": True, "tool": {"nnlite": "1"},
                      "benchmark": {"median_ns": 5, "stats": {"count": 3}}}


def test_samples_that_are_not_all_integers_are_read_as_floats():
    assert numbers(b"1, 2.5, 3e2").tolist() == [1.0, 2.5, 300.0]
    assert numbers(b" \n ").tolist() == []


def test_a_key_inside_a_string_is_not_cut(tmp_path):
    name = 'odd "samples_ns": [1, 2] name'
    data = report(samples_ns=[7, 8])
    data["model"] = {"note": name}
    parsed, samples = read_report_bytes(write(tmp_path, data))  # the key twice: the whole file is parsed
    assert samples.tolist() == [7, 8] and parsed["model"]["note"] == name and "samples_ns" not in parsed["benchmark"]
    only_in_string = {"model_name": "m", "model": {"note": name}, "benchmark": {"median_ns": 5}}
    parsed, samples = read_report_bytes(write(tmp_path, only_in_string))
    assert samples.tolist() == [] and parsed == only_in_string


def test_a_report_without_samples_or_benchmark_and_a_file_that_is_no_report(tmp_path):
    failed = {"model_name": "m", "valid": False, "error": {"stage": "lower"}}
    assert read_report_bytes(write(tmp_path, failed))[0] == failed
    with pytest.raises(ValueError, match="not an nnlite report"):
        read_report_bytes(write(tmp_path, '{"samples_ns": [1]}'))
    with pytest.raises(ValueError, match="not valid JSON"):
        read_report_bytes(write(tmp_path, '{"model_name": "m", "benchmark": {"samples_ns": [1, 2'))
