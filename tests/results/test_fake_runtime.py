"""A third runtime needs its package and one registration line: a fake one (tests/results/fakert,
registered by the one line below) shows in the summary, the runtime comparison, the HTML page and the
console's detail table beside LiteRT, and its artifacts are cached under its own suffix, with nothing
else changed."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from nnlite_tui.core import runtimes
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.outcomes import BenchResult, ConversionResult
from nnlite_tui.core.report.compare_runtimes import compare_runtimes
from nnlite_tui.core.report.document import build_report, summary_row
from nnlite_tui.core.report.html_report import build_html
from nnlite_tui.core.report.rows import load_run
from nnlite_tui.core.report.summary import add_runtime_ratios
from nnlite_tui.core.results import Report, RunResults
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.tui.widgets.precision_table import COLUMNS, columns, precision_rows


@pytest.fixture
def fakert(monkeypatch):
    monkeypatch.setitem(runtimes.REGISTRY, "fakert", "tests.results.fakert:FAKERT")  # the registration line
    runtimes.get_runtime.cache_clear()
    yield runtimes.get_runtime("fakert")
    runtimes.get_runtime.cache_clear()


def _report(unit: str, runtime: str, median_ns: float) -> Report:
    samples = [median_ns * f for f in (0.98, 0.99, 1.0, 1.01, 1.02)]
    block = {"valid": True, "backend_used": "xnnpack", "samples_ns": samples, "runtime_version": "0.0",
             "stats": {"count": 5, "median_ns": median_ns, "mean_ns": median_ns, "p90_ns": samples[-1],
                       "min_ns": samples[0], "max_ns": samples[-1], "std_ns": median_ns * 0.01}}
    spec = ModelSpec(name=unit, kind="lemur", file="/models/m.py", sha256="0" * 64, runtime=runtime)
    conversion = ConversionResult.from_converter({"model": unit, "ok": True, "params": 1000, "artifact_bytes": 4000,
                                                  "runtime": runtime})
    raw = build_report(spec=spec, conversion=conversion,
                       bench=BenchResult(serial="host", block=block, device_info={}, before=None, after=None,
                                         seconds=1.0),
                       device={"serial": "host", "kind": "host", "model": "CPU"}, settings={"backend": "xnnpack"},
                       run_id="r")
    return Report.model_validate(raw)


def test_a_registered_runtime_shows_in_every_view(fakert, tmp_path):
    assert fakert.label == "FakeRT" and "fakert" in runtimes.runtime_names()
    results = RunResults(tmp_path)
    reports = [_report("m", "litert", 2e6), _report("m@fakert", "fakert", 3e6)]
    for report in reports:
        results.write(report)

    summaries = {s.unit: s for s in RunResults(tmp_path).summaries()}
    assert summaries["m@fakert"].runtime == "fakert" and summaries["m@fakert"].model == "m"
    rows = [summary_row(r) for r in reports]
    add_runtime_ratios(rows, reports)
    assert [(r["runtime"], r["ratio_to_litert"]) for r in rows] == [("litert", 1.0), ("fakert", 1.5)]

    comparison = compare_runtimes(tmp_path, ("litert", "fakert"))
    assert len(comparison.pairs) == 1 and comparison.pairs[0].ratio == pytest.approx(1.5, rel=0.05)

    page = build_html(load_run(tmp_path))
    assert "fakert / litert" in page

    table = precision_rows(str(tmp_path), "m")
    assert [(r.runtime, r.vs_litert) for r in table] == [("litert", 1.0), ("fakert", 1.5)]
    assert columns(table) is COLUMNS


def test_an_unregistered_runtime_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown runtime 'fakert'; choose from litert, executorch"):
        runtimes.get_runtime("fakert")


class WritingWorker:
    """A conversion worker that writes the artifact it is asked for (what a runtime's export does)."""

    def __init__(self) -> None:
        self.jobs: list[dict[str, Any]] = []

    def run(self, job: dict[str, Any], cancel: Any = None) -> dict[str, Any]:
        self.jobs.append(job)
        data = b"a fakert artifact"
        Path(job["out_path"]).write_bytes(data)
        return {"ok": True, "stage": "done", "runtime": job["runtime"],
                "artifact_sha256": hashlib.sha256(data).hexdigest()}

    def kill(self) -> None:
        pass


def test_a_registered_runtimes_artifact_is_cached_under_its_own_suffix(fakert, tmp_path, monkeypatch):
    worker = WritingWorker()
    monkeypatch.setattr(Converter, "_worker", lambda self: worker)
    options = ConvertOptions(cache_dir=tmp_path / "cache", sandbox="off")
    with Converter(options, n_workers=1) as converter:
        first = converter.cached_job("ab" * 32, {"runtime": "fakert"}, tmp_path / "run" / "m@fakert.fake")
        again = converter.cached_job("ab" * 32, {"runtime": "fakert"}, tmp_path / "run" / "again.fake")
    assert Path(worker.jobs[0]["out_path"]).name == "model.fake"  # the worker wrote the runtime's suffix
    assert len(worker.jobs) == 1 and (first["cached"], again["cached"]) == (False, True)
    assert converter.cache.artifact_of("ab" * 32) == converter.cache.entry_dir("ab" * 32) / "model.fake"
    assert (tmp_path / "run" / "again.fake").read_bytes() == b"a fakert artifact"
