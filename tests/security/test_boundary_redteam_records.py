"""Results forged from inside a job, through `nnlite run` in the sandbox: a record nested 900 levels
deep, per-phase times that are not numbers, a NaN difference and an accuracy nobody measured. Each
fails its own unit with the protocol as its cause; the ordinary model beside them converts, the run
ends normally, and running it again (a resume) ends normally too.

The models know the frame (a 4-byte length and JSON, which any process can read off its socket) and
nothing of nnlite's code."""

from __future__ import annotations

import pytest

from nnlite_tui.core.results import load_reports
from tests.security.test_boundary_run import QUICK, nnlite, run_hostile

FORGERS = ["sends_deep_record", "sends_odd_phases", "rewrites_its_verdict"]


@pytest.fixture(scope="module")
def forged_run(tmp_path_factory):
    return run_hostile(tmp_path_factory.mktemp("records"), [*FORGERS, "b_after_patch"], ())


def test_forged_records_fail_their_own_unit_and_the_run_goes_on(forged_run):
    assert forged_run["proc"].returncode == 0, forged_run["proc"].stderr[-3000:]
    reports = forged_run["reports"]
    assert len(reports) == forged_run["expected"]
    assert reports["b_after_patch"]["valid"] is True
    for name in FORGERS:
        conversion = reports[name]["conversion"]
        assert reports[name]["valid"] is False, name
        assert (conversion["stage"], conversion["cause"]) == ("sandbox", "protocol"), (name, conversion)
        assert conversion.get("accuracy") is None


def test_a_nan_difference_and_an_unmeasured_accuracy_are_refused(forged_run):
    message = forged_run["reports"]["rewrites_its_verdict"]["conversion"]["error_message"]
    assert "accuracy" in message or "NaN" in message, message


def test_running_the_same_command_again_ends_normally(forged_run):
    run, cache = forged_run["run"], forged_run["cache"]
    again = nnlite(["run", str(forged_run["folder"]), "--out", str(run), *QUICK], {"NNLITE_CACHE_DIR": str(cache)})
    assert again.returncode == 0, again.stderr[-3000:]
    assert {r["model_name"] for r in load_reports(run)} == {*FORGERS, "b_after_patch"}


def _nested(levels: int) -> list:
    deep: list = []
    inner = deep
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return deep


@pytest.mark.parametrize("forged", [
    {"compute_check": {"d": _nested(900)}},
    {"weights": {"n": 10 ** 309}},
    {"phases": {"lower": [1, 2]}},
    {"phases": {"lower": {"s": "1", "cpu_s": 0}}},
    {"timings": {"lower_s": float("nan")}},
    {"validation": {"inputs": 2, "strength": "strong", "note": "extra"}},
    {"max_abs_diff": float("nan")},
    {"accuracy": {"top1": 0.999}},
])
def test_a_forged_record_is_refused_before_the_runner_walks_it(forged):
    from nnlite_tui.core.convert import messages, wire

    with pytest.raises(wire.ProtocolError):
        messages.result({"ok": True, "stage": "done", **forged})


def test_a_derivations_accuracy_is_bounded_and_judged_again():
    from nnlite_tui.core.convert import messages, wire

    block = {"precision": "int8", "route": "r", "top1_agreement": 0.1, "max_abs_err_rel": 0.5,
             "mean_abs_err_rel": 0.1, "cosine": 0.5, "max_abs_err": 1.0, "samples": 4,
             "tolerance": {"cosine": 0.0}, "verdict": "ok", "beyond": [],
             "alternatives": [{"route": "pt2e", "error": "no"}]}
    judged = messages.result({"ok": True, "stage": "done", "accuracy": block}, derive=True)["accuracy"]
    assert judged["verdict"] == "degraded" and judged["beyond"]
    with pytest.raises(wire.ProtocolError):
        messages.result({"ok": True, "stage": "done", "accuracy": {**block, "top1_agreement": 1.5}}, derive=True)
