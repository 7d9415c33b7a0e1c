"""Precisions as units of work: naming, resume, derivation from fp32, accuracy, quantized inputs.

The end-to-end part runs the real pipeline on the host: litert-torch converts fp32, ai-edge-quantizer
derives fp16 / dynamic-range int8 / full int8 in the conversion worker, the interpreter measures.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.input_fill import make_input
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.events import RecordingReporter, StageStarted
from nnlite_tui.core.sources.units import PRECISIONS, base_spec, expand, parse_precisions
from nnlite_tui.core.report.document import write_lemur
from nnlite_tui.core.run.setup import build_pipeline
from nnlite_tui.core.sources.discover import SourceError
from nnlite_tui.core.sources.discover import discover
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import load_snapshot
from nnlite_tui.core.report.summary import write_summary
from nnlite_tui.core.bench.tensor_quant import dequantize

pytestmark = pytest.mark.slow  # real conversions and runs

FAST = BenchSettings(warmup=1, runs=5, min_seconds=0.0, warmup_seconds=0.0)


def test_precisions_parse_in_canonical_order_and_unknown_ones_are_named():
    assert parse_precisions("int8,fp32") == ("fp32", "int8")
    assert parse_precisions("all") == PRECISIONS
    with pytest.raises(ValueError, match="int4"):
        parse_precisions("fp32,int4")


def test_each_model_becomes_one_unit_per_precision_and_fp32_specs_are_unchanged(good_models):
    plain = discover([str(good_models)])
    units = discover([str(good_models)], precisions=("fp32", "int8"))
    assert [s.name for s in units] == ["tiny_conv", "wide_conv", "tiny_conv@int8", "wide_conv@int8"]
    # fp32 units are the very specs (and keys, and stored dicts) a run without --precision makes.
    assert units[:2] == plain and "precision" not in units[0].to_dict()
    derived = units[2]
    assert derived.precision == "int8" and derived.to_dict()["precision"] == "int8"
    assert derived.key() != plain[0].key() and base_spec(derived) == plain[0]
    assert ModelSpec.from_dict(derived.to_dict()) == derived
    with pytest.raises(SourceError, match="fp64"):
        discover([str(good_models)], precisions=("fp64",))
    assert [s.name for s in expand(plain[:1], ("fp32", "fp16"))] == ["tiny_conv", "tiny_conv@fp16"]


def test_a_quantized_input_gets_the_float_sample_quantized_with_its_scale_and_zero_point():
    shape, seed = (1, 4, 4, 3), 7
    float_sample = make_input(shape, np.float32, seed)
    q = make_input(shape, np.int8, seed, (0.05, 3))
    assert q.dtype == np.int8
    recovered = dequantize(q, 0.05, 3)
    inside = np.abs(float_sample) < 0.05 * 120  # away from saturation
    assert np.max(np.abs(recovered - float_sample)[inside]) <= 0.025 + 1e-6
    # Without quantization parameters an integer tensor still gets plain small integers (ids, masks).
    assert make_input(shape, np.int32, seed).dtype == np.int32


@pytest.fixture(scope="module")
def precision_run(tmp_path_factory):
    """tiny_conv run first in fp32, then resumed with every precision."""
    from tests.conftest import FIXTURES

    base = tmp_path_factory.mktemp("precision")
    models = base / "models"
    models.mkdir()
    shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", models)
    out = base / "run"

    def run(precisions):
        cfg = RunConfig(sources=[str(models)], out=out, bench=FAST,
                        convert=ConvertOptions(workers=1, timeout_s=120, calibration_samples=8),
                        backoff_s=0.1, cooldown_s=0.1, precisions=precisions, keep_artifacts="all")
        pipeline = build_pipeline(cfg)
        rec = RecordingReporter()
        try:
            pipeline.run(rec, Control())
        finally:
            pipeline.store.close()
        write_summary(out)
        return rec

    run(("fp32",))
    first = json.loads((out / "reports" / "tiny_conv__host__xnnpack.json").read_text())
    rec = run(PRECISIONS)
    return out, first, rec


def _reports(out: Path) -> dict[str, dict]:
    return {r["model_name"]: r for r in (json.loads(p.read_text()) for p in (out / "reports").glob("*.json"))}


def test_resuming_with_all_precisions_adds_the_variants_without_redoing_fp32(precision_run):
    out, first, rec = precision_run
    reports = _reports(out)
    assert set(reports) == {"tiny_conv", "tiny_conv@fp16", "tiny_conv@dynamic-int8", "tiny_conv@int8"}
    assert all(r["valid"] for r in reports.values()), {k: r["error_message"] for k, r in reports.items()}
    assert reports["tiny_conv"]["created_at"] == first["created_at"]
    assert {e.model for e in rec.of(StageStarted)} == {"tiny_conv@fp16", "tiny_conv@dynamic-int8", "tiny_conv@int8"}
    _, records = load_snapshot(out)
    assert {r["name"]: r["status"] for r in records} == dict.fromkeys(reports, "done")
    assert first["accuracy"] is None and first["model"]["precision"] == "fp32"
    assert not list((out / "artifacts").glob("*.fp32-source.tflite"))  # the derivations' private fp32 copies


def test_every_derived_unit_reports_its_precision_route_and_accuracy_cost(precision_run):
    out, _, _ = precision_run
    reports = _reports(out)
    fp32_bytes = reports["tiny_conv"]["conversion"]["artifact_bytes"]
    for precision in ("fp16", "dynamic-int8", "int8"):
        report = reports[f"tiny_conv@{precision}"]
        acc = report["accuracy"]
        assert report["model"]["precision"] == precision and report["model"]["base_name"] == "tiny_conv"
        assert acc["precision"] == precision and acc["route"].startswith("ai-edge-quantizer")
        assert acc["verdict"] in ("ok", "degraded") and acc["samples"] == 16
        assert 0.9 < acc["cosine"] <= 1.0 + 1e-9 and acc["max_abs_err_rel"] >= 0
        assert report["conversion"]["artifact_bytes"] < fp32_bytes
    int8 = reports["tiny_conv@int8"]
    assert int8["conversion"]["artifact_input_dtype"] == "int8"
    assert int8["accuracy"]["calibration"]["source"] == "synthetic"
    assert int8["accuracy"]["calibration"]["samples"] == 8
    assert reports["tiny_conv@fp16"]["accuracy"]["calibration"] is None
    assert reports["tiny_conv@fp16"]["accuracy"]["max_abs_err_rel"] < 1e-2


def test_summary_has_precision_speedup_and_accuracy_columns(precision_run):
    out, _, _ = precision_run
    rows = {r["model"]: r for r in csv.DictReader(open(out / "summary.csv"))}
    assert rows["tiny_conv"]["precision"] == "fp32" and float(rows["tiny_conv"]["speedup_vs_fp32"]) == 1.0
    int8 = rows["tiny_conv@int8"]
    fp32_median = float(rows["tiny_conv"]["median_ms"])
    assert float(int8["speedup_vs_fp32"]) == pytest.approx(fp32_median / float(int8["median_ms"]), rel=1e-3)
    assert int8["accuracy"] in ("ok", "degraded") and float(int8["cosine"]) > 0.9


def test_lemur_export_keeps_the_model_name_and_says_the_precision(precision_run, tmp_path):
    out, _, _ = precision_run
    written = write_lemur(list(_reports(out).values()), tmp_path)
    data = {p.name: json.loads(p.read_text()) for p in written}
    assert len({p.parent for p in written}) == 1  # one nn folder for the four precisions
    assert {d["precision"] for d in data.values()} == set(PRECISIONS)
    assert {d["model_name"] for d in data.values()} == {"tiny_conv"}


def test_a_wrongly_scaled_int8_input_is_caught_against_fp32(precision_run):
    """Fed raw integers instead of the quantized sample, the int8 model's output departs from the
    fp32 model's on the same sample; fed correctly, it agrees."""
    from ai_edge_litert.interpreter import Interpreter

    from nnlite_tui.core.bench.tensor_quant import from_model_output

    out, _, _ = precision_run

    def run(path: Path, x) -> np.ndarray:
        it = Interpreter(model_path=str(path))
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        detail = it.get_output_details()[0]
        return from_model_output(it.get_tensor(detail["index"]), detail).ravel(), it.get_input_details()[0]

    fp32_path, int8_path = out / "artifacts" / "tiny_conv.tflite", out / "artifacts" / "tiny_conv@int8.tflite"
    probe = Interpreter(model_path=str(int8_path)).get_input_details()[0]
    shape, seed = probe["shape"], 0
    want, _ = run(fp32_path, make_input(shape, np.float32, seed))
    right, _ = run(int8_path, make_input(shape, np.int8, seed, probe["quantization"]))
    wrong, _ = run(int8_path, make_input(shape, np.int8, seed))

    def rel(got):
        return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))

    assert rel(right) < 0.2
    assert rel(wrong) > 3 * rel(right)


def test_int8_calibrates_on_a_directory_of_arrays_and_a_misfit_array_fails_naming_its_file(tmp_path, good_models):
    from nnlite_tui.core.convert.converter import Converter

    good, bad = tmp_path / "calib", tmp_path / "calib-bad"
    good.mkdir()
    bad.mkdir()
    rng = np.random.default_rng(3)
    np.savez(good / "batch.npz", a=rng.standard_normal((3, 3, 32, 32)).astype(np.float32))
    np.save(good / "one.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    np.save(bad / "wrong.npy", np.zeros((1, 32, 32, 3), np.float32))
    unit = discover([str(good_models / "tiny_conv.py")], precisions=("int8",))[0]
    results = {}
    for label, directory in (("good", good), ("bad", bad)):
        with Converter(ConvertOptions(workers=1, timeout_s=120, calibration_dir=directory), n_workers=1) as conv:
            results[label] = conv.convert(unit, tmp_path / label / "tiny_conv@int8.tflite")
    ok = results["good"]
    assert ok["ok"], ok
    calibration = ok["accuracy"]["calibration"]
    assert calibration["source"] == "directory" and calibration["samples"] == 4
    assert calibration["files"] == ["batch.npz", "one.npy"]
    failed = results["bad"]
    assert not failed["ok"] and failed["stage"] == "calibrate"
    assert "wrong.npy" in failed["error_message"] and "[1, 32, 32, 3]" in failed["error_message"]


def test_the_int8_route_kept_is_the_one_within_tolerance_else_the_more_accurate():
    from nnlite_tui.core.runtimes.litert.quantize import _better

    recipe = {"verdict": "degraded", "max_abs_err_rel": 0.26}
    assert _better({"verdict": "ok", "max_abs_err_rel": 0.04}, recipe)
    assert _better({"verdict": "degraded", "max_abs_err_rel": 0.21}, recipe)
    assert not _better({"verdict": "degraded", "max_abs_err_rel": 0.3}, recipe)
    assert not _better({"verdict": "degraded", "max_abs_err_rel": 0.01}, {"verdict": "ok", "max_abs_err_rel": 0.1})
