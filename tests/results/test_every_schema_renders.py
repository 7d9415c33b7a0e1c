"""Every run directory written since report schema 1 loads and renders in every view: the typed
report, the summaries and summary.csv, the result rows (compare, the HTML page), the LEMUR export,
and the console's detail screen (its report lines and its runtimes/precisions table).

The fixtures are committed run directories, one per schema: release-0.1.0 (1), ops-schema3 (2, its
ops blocks of ops schema 3), schema3 (3) and schema4-runtimes (4, LiteRT and ExecuTorch units with
rounds and a failed unit)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nnlite_tui.core.report.compare import compare_runs
from nnlite_tui.core.report.compare_format import to_table
from nnlite_tui.core.report.document import to_csv, write_lemur
from nnlite_tui.core.report.html_report import build_html
from nnlite_tui.core.report.rows import load_run
from nnlite_tui.core.report.summary import summary_rows
from nnlite_tui.core.results import SCHEMA_VERSION, RunResults, load_reports
from nnlite_tui.tui.screens.detail import find_reports, report_lines
from nnlite_tui.tui.widgets.precision_table import precision_rows

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
SCHEMAS = {"release-0.1.0": 1, "ops-schema3": 2, "schema3": 3, "schema4-runtimes": 4}


@pytest.fixture(params=sorted(SCHEMAS), scope="module")
def run(request, tmp_path_factory) -> tuple[int, Path]:
    dest = tmp_path_factory.mktemp(request.param) / "run"
    shutil.copytree(RUNS / request.param, dest, ignore=shutil.ignore_patterns("models"))
    for path in dest.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("@RUN@", str(dest)))
    return SCHEMAS[request.param], dest


def test_the_reports_read_as_today_s_schema(run):
    version, path = run
    results = RunResults(path, strict=True)
    reports = list(results)
    assert reports and {r.upgraded_from for r in reports} == {None if version == SCHEMA_VERSION else version}
    for report, summary in zip(reports, results.summaries()):
        assert summary.unit == report.model_name and summary.runtime in ("litert", "executorch")
        assert summary.precision == "fp32" and summary.model == report.base_model
        assert (summary.median_ns is not None) == report.valid
        assert report.conversion.extra("tflite_bytes") is None
        assert bool(report.conversion.artifact_bytes) == (report.conversion.ok is not False)


def test_summaries_rows_html_and_lemur_render(run, tmp_path):
    version, path = run
    loaded = load_run(path)
    assert len(loaded.rows) == len(RunResults(path))
    if (path / "state.json").exists():
        rows = summary_rows(path)
        assert len(rows) >= len(loaded.rows) and to_csv(rows).count("\n") == len(rows) + 1
    page = build_html(loaded)
    for row in loaded.rows:
        assert row.model in page
    written = write_lemur(load_reports(path), tmp_path / "lemur")
    assert len(written) == len(loaded.rows)
    table = to_table(compare_runs(path, path))
    assert all(row.model in table for row in loaded.rows)


def test_the_console_detail_reads_every_report(run):
    version, path = run
    for summary in RunResults(path).summaries():
        found = find_reports(str(path), summary.unit)
        assert [p.name for p, _ in found] == [summary.file]
        text = report_lines(*found[0]).plain
        assert ("valid yes" in text) == summary.valid
        if summary.valid:
            assert "latency" in text
        rows = precision_rows(str(path), summary.unit)
        assert summary.runtime in {r.runtime for r in rows}


def test_the_newest_fixture_has_rounds_runtimes_and_a_failure(tmp_path):
    shutil.copytree(RUNS / "schema4-runtimes", tmp_path / "run")
    results = RunResults(tmp_path / "run", strict=True)
    summaries = {(s.unit, s.runtime): s for s in results.summaries()}
    assert summaries[("mnist_lenet", "litert")].rounds >= 3
    assert summaries[("mnist_lenet@executorch", "executorch")].interval_low_ns is not None
    failed = summaries[("uses_topk", "litert")]
    assert failed.status == "failed" and failed.error_stage and failed.median_ns is None
