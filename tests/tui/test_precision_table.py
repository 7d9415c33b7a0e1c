"""The detail screen's precisions table: a model's fp32, fp16, dynamic-range int8 and int8 reports side by side,
and its LiteRT and ExecuTorch units in one table when the run has both."""

import json

from nnlite_tui.tui.screens.detail import ModelDetailScreen
from nnlite_tui.tui.widgets.precision_table import PrecisionTable

from .conftest import FROZEN, feed, frozen_app
from .scripted import busy_run_events

SIZE = (160, 48)


def _report(unit: str, precision: str, *, size: int | None, median_ns: int | None, accuracy: dict | None = None,
            runtime: str | None = None, conversion: dict | None = None) -> dict:
    base = unit.split("@")[0]
    report = {"model_name": unit, "valid": median_ns is not None, "duration": median_ns,
              "error_message": None if median_ns else "benchmark:invoke: boom", "device_type": "host",
              "model": {"name": unit, "precision": precision, "base_name": base},
              "conversion": conversion or {"artifact_bytes": size}, "accuracy": accuracy,
              "benchmark": {"stats": {"median_ns": median_ns} if median_ns else None}}
    if runtime:  # reports of releases before runtimes existed have none: they read as LiteRT's
        report.update(runtime=runtime, runtime_version="1.5.1" if runtime == "executorch" else "2.3.0")
    return report


def _accuracy(precision: str, top1: float, cosine: float, rel: float, verdict: str) -> dict:
    return {"precision": precision, "top1_agreement": top1, "cosine": cosine, "max_abs_err_rel": rel,
            "verdict": verdict}


async def test_the_detail_screen_shows_every_precision_of_the_model_with_its_cost(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    written = {
        "model_00__host__xnnpack": _report("model_00", "fp32", size=400_000, median_ns=1_800_000),
        "model_00@fp16__host__xnnpack": _report("model_00@fp16", "fp16", size=204_000, median_ns=1_790_000,
                                                accuracy=_accuracy("fp16", 1.0, 0.999999, 4.1e-4, "ok")),
        "model_00@dynamic-int8__host__xnnpack": _report("model_00@dynamic-int8", "dynamic-int8", size=108_000,
                                                        median_ns=None),
        "model_00@int8__host__xnnpack": _report("model_00@int8", "int8", size=112_000, median_ns=600_000,
                                                accuracy=_accuracy("int8", 0.5, 0.93, 0.31, "degraded")),
        # Another model whose name starts the same: not one of model_00's precisions.
        "model_001@int8__host__xnnpack": _report("model_001@int8", "int8", size=1, median_ns=1),
    }
    for name, report in written.items():
        (reports / f"{name}.json").write_text(json.dumps(report))
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("enter")
        assert isinstance(app.screen, ModelDetailScreen) and app.screen.model == "model_00"
        table = app.screen.query_one("#precisions", PrecisionTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [str(c.label) for c in table.columns.values()] == [
            "precision", "device", "size", "median", "speed-up", "top-1", "cosine", "max rel err", "accuracy"]
        assert rows == [
            ["fp32", "host__xnnpack", "391 KiB", "1.80 ms", "1.00x", "-", "-", "-", "-"],
            ["fp16", "host__xnnpack", "199 KiB (0.51x)", "1.79 ms", "1.01x", "1.00", "1.00000", "4.10e-04", "ok"],
            ["dynamic-int8", "host__xnnpack", "105 KiB (0.27x)", "failed", "-", "-", "-", "-", "-"],
            ["int8", "host__xnnpack", "109 KiB (0.28x)", "0.600 ms", "3.00x", "0.50", "0.93000", "3.10e-01",
             "degraded"],
        ]
        degraded = table.get_row_at(3)[-1]
        assert any("error" in str(span.style) for span in degraded.spans)  # flagged in the error colour
        await pilot.press("enter")  # the table takes no keys: enter still goes back
        assert not isinstance(app.screen, ModelDetailScreen)


async def test_the_detail_screen_shows_both_runtimes_in_one_table_with_the_ratio_to_litert(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    written = {
        # The LiteRT units as a release before runtimes wrote them (no runtime key), the ExecuTorch ones as now.
        "model_00__host__xnnpack": _report("model_00", "fp32", size=400_000, median_ns=1_800_000),
        "model_00@int8__host__xnnpack": _report("model_00@int8", "int8", size=112_000, median_ns=600_000,
                                                accuracy=_accuracy("int8", 1.0, 0.999, 0.1, "ok")),
        "model_00@executorch__host__xnnpack": _report("model_00@executorch", "fp32", size=396_000,
                                                      median_ns=2_700_000, runtime="executorch"),
        "model_00@executorch@int8__host__xnnpack": _report("model_00@executorch@int8", "int8", size=None,
                                                           median_ns=None, runtime="executorch", accuracy=None,
                                                           conversion={"ok": False, "stage": "lower",
                                                                       "cause": "lowering-missing"}),
    }
    for name, report in written.items():
        (reports / f"{name}.json").write_text(json.dumps(report))
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("enter")
        assert isinstance(app.screen, ModelDetailScreen) and app.screen.model == "model_00"
        table = app.screen.query_one("#precisions", PrecisionTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [str(c.label) for c in table.columns.values()] == [
            "runtime", "precision", "device", "convert", "size", "median", "vs LiteRT", "speed-up", "top-1", "cosine",
            "max rel err", "accuracy"]
        # vs LiteRT: 2.7 / 1.8 ms on the same device and precision; speed-up: within the runtime.
        assert rows == [
            ["litert", "fp32", "host__xnnpack", "ok", "391 KiB", "1.80 ms", "1.00x", "1.00x", "-", "-", "-", "-"],
            ["litert", "int8", "host__xnnpack", "ok", "109 KiB (0.28x)", "0.600 ms", "1.00x", "3.00x", "1.00",
             "0.99900", "1.00e-01", "ok"],
            ["executorch", "fp32", "host__xnnpack", "ok", "387 KiB", "2.70 ms", "1.50x", "1.00x", "-", "-", "-", "-"],
            ["executorch", "int8", "host__xnnpack", "lower: lowering-missing", "-", "failed", "-", "-", "-", "-", "-", "-"],
        ]
