"""`nnlite report --format lemur` builds paths from report fields: a crafted report (a model name that
climbs out, an absolute task, a NUL byte, a link planted in the output folder) is refused with one
line naming the report file, and nothing is written, inside -o or outside it."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import FIXTURES
from tests.security.limits_helpers import files_under, nnlite

RUN = FIXTURES / "runs" / "ops-schema3"
VICTIM = "mnist_lenet__host__xnnpack.json"


def _crafted(tmp_path, change) -> tuple:
    run = tmp_path / "work" / "run"
    shutil.copytree(RUN, run)
    path = run / "reports" / VICTIM
    report = json.loads(path.read_text())
    change(report)
    path.write_text(json.dumps(report))
    return run, tmp_path / "work" / "out" / "lemur"


def _named(value: str):
    def change(report):
        report["model_name"] = value
        report.setdefault("model", {})["base_name"] = value
    return change


def _task(value: str):
    def change(report):
        report.setdefault("model", {})["task"] = value
    return change


@pytest.mark.parametrize("change, says", [
    (_named("../../../escape"), "model_name"),
    (_named("/tmp/nnlite-absolute-escape"), "model_name"),
    (_task("/abs"), "model.task"),
    (_named("a\x00b"), "NUL"),
    (_task("../../../up"), "model.task"),
])
def test_a_crafted_report_is_refused_and_nothing_is_written(tmp_path, change, says):
    run, out = _crafted(tmp_path, change)
    proc = nnlite(["report", str(run), "--format", "lemur", "-o", str(out)], timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode != 0
    assert VICTIM in err and says in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert files_under(tmp_path / "work") == files_under(run)  # nothing beside the run, in -o or outside it
    assert not (tmp_path / "escape").exists()


def test_a_link_planted_in_the_output_folder_is_not_followed(tmp_path):
    run, out = _crafted(tmp_path, lambda report: None)
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / "ab" / "nn" / "stat" / "run").mkdir(parents=True)
    (out / "ab" / "nn" / "stat" / "run" / "img-classification_mnist_lenet").symlink_to(outside)
    proc = nnlite(["report", str(run), "--format", "lemur", "-o", str(out)], timeout=120)
    assert proc.returncode != 0 and "leads outside" in proc.stderr.decode(), proc.stderr.decode()
    assert list(outside.iterdir()) == []


def test_a_plain_report_still_exports(tmp_path):
    run, out = _crafted(tmp_path, lambda report: None)
    proc = nnlite(["report", str(run), "--format", "lemur", "-o", str(out)], timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(files_under(out)) == 2
