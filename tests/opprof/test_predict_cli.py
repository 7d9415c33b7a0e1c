"""`nnlite predict` usage errors, the --profile-ops option, and resuming runs stored before it existed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nnlite_tui.cli import main
from nnlite_tui.commands.run_cmd import profile_mode
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.run.config import RunConfig, check_resume

REPO = Path(__file__).resolve().parents[2]


def test_predict_without_profiles_names_the_run_and_the_flag(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "m__host__xnnpack.json").write_text(json.dumps(
        {"model_name": "m", "valid": True, "duration": 1000, "device": {"serial": "host"},
         "benchmark": {"stats": {"median_ns": 1000}}}))
    result = CliRunner().invoke(main, ["predict", str(REPO / "sample_models"), "--from", str(tmp_path)])
    assert result.exit_code == 2
    assert str(tmp_path) in result.output and "--profile-ops" in result.output


def test_predict_names_the_precision_it_found_no_profiles_at_and_takes_one_at_a_time(tmp_path):
    (tmp_path / "reports").mkdir()
    result = CliRunner().invoke(main, ["predict", str(REPO / "sample_models"), "--from", str(tmp_path),
                                       "--precision", "int8"])
    assert result.exit_code == 2 and "at precision int8" in result.output
    result = CliRunner().invoke(main, ["predict", str(REPO / "sample_models"), "--from", str(tmp_path),
                                       "--precision", "fp32,int8"])
    assert result.exit_code == 2 and "one precision at a time" in result.output


def test_profile_ops_auto_follows_the_backend():
    assert profile_mode("auto", "xnnpack") == "xnnpack"
    assert profile_mode("auto", "cpu") == "builtin"
    assert profile_mode(None, "xnnpack") is None
    assert profile_mode("both", "cpu") == "both"


def test_runs_stored_before_profile_ops_still_resume(tmp_path):
    old = RunConfig(sources=["x"], out=tmp_path).to_dict()
    old["result_settings"]["bench"].pop("profile_ops", None)
    old["result_settings"]["bench"].pop("profile_runs", None)
    assert check_resume(old, RunConfig(sources=["x"], out=tmp_path)) == []
    profiled = RunConfig(sources=["x"], out=tmp_path, bench=BenchSettings(profile_ops="xnnpack"))
    assert any("--profile-ops" in line for line in check_resume(old, profiled))
