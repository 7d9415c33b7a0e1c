"""The Results API: a report of any schema read as today's, written and found again by key through the
run's index, and summaries that need no report opened."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nnlite_tui.core.outcomes import BenchResult, ConversionResult
from nnlite_tui.core.report.document import build_report
from nnlite_tui.core.results import (SCHEMA_VERSION, Report, ReportError, RunResults, UnitKey, parse_report,
                                     read_report)
from nnlite_tui.core.run_dir import REPORT_INDEX_FILE as INDEX_FILE
from nnlite_tui.core.spec import ModelSpec

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def _spec(name: str = "m") -> ModelSpec:
    return ModelSpec(name=name, kind="lemur", file=f"/models/{name}.py", sha256="0" * 64, in_shape=(1, 3, 8, 8))


def _current_report(name: str = "m", median_ns: float = 2_000_000.0) -> dict:
    samples = [median_ns * f for f in (0.9, 1.0, 1.1)]
    block = {"valid": True, "backend_used": "xnnpack", "samples_ns": samples, "input_shapes": [[1, 8, 8, 3]],
             "stats": {"count": 3, "median_ns": median_ns, "mean_ns": median_ns, "p90_ns": samples[-1],
                       "min_ns": samples[0], "max_ns": samples[-1], "std_ns": 1.0},
             "median_ns": median_ns, "rounds": [{"index": 1, "median_ns": median_ns, "stats": {"count": 3}}],
             "interval": {"low_ns": median_ns * 0.95, "high_ns": median_ns * 1.05},
             "stability": {"verdict": "stable", "reasons": []}, "a_runtime_key": {"kept": True}}
    bench = BenchResult(serial="host", block=block, device_info={}, before=None, after=None, seconds=1.0)
    conversion = ConversionResult.from_converter({"model": name, "ok": True, "params": 1234, "artifact_bytes": 5678,
                                                  "model_flops": 99})
    return build_report(spec=_spec(name), conversion=conversion, bench=bench,
                        device={"serial": "host", "kind": "host", "model": "CPU"},
                        settings={"backend": "xnnpack"}, run_id="r1")


def test_a_report_reads_and_writes_back_every_key_it_came_with():
    raw = json.loads(json.dumps(_current_report()))
    report = parse_report(raw)
    assert report.schema_version == SCHEMA_VERSION and report.upgraded_from is None
    assert report.benchmark.extra("a_runtime_key") == {"kept": True}
    assert json.dumps(report.to_json(), sort_keys=True) == json.dumps(raw, sort_keys=True)


def test_every_schema_in_the_fixtures_reads_as_today_s():
    v1 = read_report(RUNS / "release-0.1.0" / "reports" / "mnist_lenet__host__xnnpack.json")
    assert v1.upgraded_from == 1
    assert v1.conversion.artifact_bytes == 253824 and v1.conversion.extra("tflite_bytes") is None
    assert (v1.runtime_name, v1.precision, v1.base_model) == ("litert", "fp32", "mnist_lenet")
    v2 = read_report(RUNS / "ops-schema3" / "reports" / "plain_cnn__host__xnnpack.json")
    assert v2.upgraded_from == 2 and v2.benchmark.ops is not None and v2.benchmark.ops.kernel_mode == "xnnpack"
    assert v2.benchmark.headline_median_ns == v2.benchmark.stats.median_ns == 305473.0


def test_a_bad_report_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(ReportError, match="x.json: not an nnlite report"):
        parse_report([1, 2], "x.json")
    with pytest.raises(ReportError, match="newer than this release"):
        parse_report({"model_name": "m", "schema_version": SCHEMA_VERSION + 1}, "x.json")
    with pytest.raises(ReportError, match=r"y.json: benchmark.stats.count: .*integer"):
        parse_report({"model_name": "m", "benchmark": {"stats": {"count": "many"}}}, "y.json")


def test_a_written_report_is_found_by_its_key_and_listed_without_opening_it(tmp_path):
    results = RunResults(tmp_path)
    for name, median in (("resnet", 2e6), ("resnet18", 3e6)):
        results.write(Report.model_validate(_current_report(name, median)))
    assert (tmp_path / INDEX_FILE).read_text().count("\n") == 2
    again = RunResults(tmp_path)
    assert [s.file for s in again.summaries()] == ["resnet18__host__xnnpack.json", "resnet__host__xnnpack.json"]
    found = again.get(UnitKey("resnet", "host", "xnnpack"))
    assert found is not None and found.benchmark.headline_median_ns == 2e6
    assert again.get(UnitKey("resnet1", "host", "xnnpack")) is None
    summary = again.summary(UnitKey("resnet18", "host", "xnnpack"))
    assert (summary.median_ms, summary.params, summary.flops, summary.rounds, summary.stable) == (3.0, 1234, 99, 1, True)
    assert summary.interval_low_ns == pytest.approx(3e6 * 0.95)
    # Opening again re-summarised nothing: the index already described both files as they are.
    assert (tmp_path / INDEX_FILE).read_text().count("\n") == 2


def test_a_run_of_an_earlier_release_gets_an_index_and_a_changed_report_is_read_again(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "ops-schema3", run)
    results = RunResults(run, strict=True)
    assert sorted(s.unit for s in results.summaries()) == ["mnist_lenet", "plain_cnn"]
    assert (run / INDEX_FILE).exists()
    path = run / "reports" / "plain_cnn__host__xnnpack.json"
    data = json.loads(path.read_text())
    data.update(valid=False, error={"stage": "benchmark", "type": "X", "message": "boom"})
    path.write_text(json.dumps(data))
    changed = RunResults(run).summary(UnitKey("plain_cnn", "host", "xnnpack"))
    assert (changed.status, changed.error_stage, changed.error_message, changed.median_ns) == \
        ("failed", "benchmark", "boom", None)


def test_a_live_reader_takes_in_what_the_writer_added(tmp_path):
    writer, reader = RunResults(tmp_path), RunResults(tmp_path)
    assert len(reader) == 0
    writer.write(Report.model_validate(_current_report("late")))
    assert reader.refresh() == 1 and reader.of_unit("late")[0].median_ms == 2.0
