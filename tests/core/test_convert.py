"""Real conversions in real worker processes: success, every failure stage, cache, isolation."""

from __future__ import annotations

import json
import sys

import pytest

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.sources.discover import discover
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def converter(tmp_path_factory):
    """One converter for the module: the worker's 5 s import is paid once (and again after kills)."""
    cache = tmp_path_factory.mktemp("convert-cache")
    opts = ConvertOptions(timeout_s=10, mem_cap_mb=2500, recycle_after=50, cache_dir=cache, workers=1)
    conv = Converter(opts, log_dir=tmp_path_factory.mktemp("logs"), n_workers=1)
    yield conv
    conv.close()


def _spec(folder, name):
    return next(s for s in discover([str(folder)]) if s.name == name)


def test_good_model_converts_channels_last_and_matches_pytorch(converter, good_models, tmp_path):
    spec = _spec(good_models, "tiny_conv")
    result = converter.convert(spec, tmp_path / "tiny.tflite", tmp_path / "tiny.log")
    assert result["ok"], result
    assert result["stage"] == "done"
    assert result["layout"] == "NHWC"
    assert result["artifact_input_shape"] == [1, 32, 32, 3]
    assert result["output_shapes"] == [[1, 10]]
    assert 0 <= result["max_abs_diff"] < 1e-4
    assert (tmp_path / "tiny.tflite").stat().st_size == result["artifact_bytes"] > 0
    assert result["params"] == 3 * 8 * 9 + 8 + 8 * 10 + 10
    assert result["converter_version"] == "0.10.0"
    assert result["validation"]["inputs"] == 2
    assert result["validation"]["strength"] == "strong"
    assert result["validation"]["input_sensitivity"] > 1e-3


def test_a_model_whose_output_ignores_its_input_is_flagged_as_weakly_checked(converter, good_models, tmp_path):
    # tiny_conv with every ReLU input far below zero: the output is the classifier's bias for any
    # image, what random weights do to some real models.
    tiny = (good_models / "tiny_conv.py").read_text()
    saturated = tiny.replace("self.act(self.conv(x))", "self.act(self.conv(x) - 1e4)")
    assert saturated != tiny
    (tmp_path / "saturated").mkdir()
    (tmp_path / "saturated" / "saturated_relu.py").write_text(saturated)
    spec = _spec(tmp_path / "saturated", "saturated_relu")
    result = converter.convert(spec, tmp_path / "sat.tflite")
    assert result["ok"], result
    assert result["validation"]["strength"].startswith("weak")
    assert result["validation"]["input_sensitivity"] < 1e-3


def test_second_conversion_comes_from_cache(converter, good_models, tmp_path):
    spec = _spec(good_models, "tiny_conv")
    first = converter.convert(spec, tmp_path / "a.tflite")
    again = converter.convert(spec, tmp_path / "b.tflite", tmp_path / "b.log")
    assert first["ok"] and again["ok"]
    assert again["cached"] is True
    assert again["artifact_sha256"] == first["artifact_sha256"]
    assert (tmp_path / "b.tflite").read_bytes() == (tmp_path / "a.tflite").read_bytes()
    assert "cached conversion" in (tmp_path / "b.log").read_text()


def test_changed_source_misses_the_cache(converter, good_models, tmp_path):
    spec = _spec(good_models, "tiny_conv")
    converter.convert(spec, tmp_path / "a.tflite")
    path = good_models / "tiny_conv.py"
    path.write_text(path.read_text().replace("8, 3, padding=1", "12, 3, padding=1").replace("nn.Linear(8,", "nn.Linear(12,"))
    changed = converter.convert(_spec(good_models, "tiny_conv"), tmp_path / "b.tflite")
    assert changed["ok"] and changed["cached"] is False, changed


@pytest.mark.parametrize("name, stage, error_type, needle", [
    ("syntax_error", "import", "SyntaxError", "syntax_error.py:8"),
    ("ctor_raises", "instantiate", "ValueError", "needs 64x64 input"),
    ("uses_topk", "validate", "ValueError", "STABLEHLO_SORT"),
])
def test_deterministic_failures_name_their_stage(converter, bad_models, tmp_path, name, stage, error_type, needle):
    result = converter.convert(_spec(bad_models, name), tmp_path / f"{name}.tflite")
    assert not result["ok"]
    assert (result["stage"], result["error_type"]) == (stage, error_type)
    assert needle in result["error_message"]
    assert "\n" not in result["error_message"]
    assert not (tmp_path / f"{name}.tflite").exists()


def test_forever_loop_times_out_and_the_next_model_still_converts(converter, bad_models, good_models, tmp_path):
    result = converter.convert(_spec(bad_models, "loops_forever"), tmp_path / "loop.tflite")
    assert (result["stage"], result["error_type"]) == ("timeout", "Timeout")
    after = converter.convert(_spec(good_models, "wide_conv"), tmp_path / "wide.tflite")
    assert after["ok"], after


def test_memory_hog_is_killed_at_the_cap(converter, bad_models, tmp_path):
    result = converter.convert(_spec(bad_models, "memory_hog"), tmp_path / "hog.tflite")
    assert result["stage"] == "out-of-memory"
    assert "memory cap of 2500 MB" in result["error_message"]


def test_worker_crash_is_reported_not_raised(converter, bad_models, tmp_path):
    result = converter.convert(_spec(bad_models, "crashes_worker"), tmp_path / "crash.tflite")
    assert (result["stage"], result["error_type"]) == ("crash", "WorkerCrash")
    assert "exit code 139" in result["error_message"]


def test_transient_failures_are_not_cached(converter, bad_models, tmp_path):
    spec = _spec(bad_models, "crashes_worker")
    converter.convert(spec, tmp_path / "c1.tflite")
    again = converter.convert(spec, tmp_path / "c2.tflite")
    assert again["cached"] is False


def test_factory_source(converter, tmp_path):
    spec = discover([f"{FIXTURES / 'factory_mlp.py'}:make"])[0]
    result = converter.convert(spec, tmp_path / "mlp.tflite")
    assert result["ok"], result
    assert result["layout"] == "NHWC"
    assert result["output_shapes"] == [[1, 4]]


def test_orchestrator_never_imports_torch(good_models, tmp_path):
    """The conversion runs in the worker; the calling process stays light."""
    import subprocess

    code = (
        "import sys, pathlib\n"
        "from nnlite_tui.core.convert.converter import Converter, ConvertOptions\n"
        "from nnlite_tui.core.sources.discover import discover\n"
        f"spec = discover([{str(good_models)!r}])[0]\n"
        f"c = Converter(ConvertOptions(cache_dir=pathlib.Path({str(tmp_path / 'c')!r})), n_workers=1)\n"
        f"r = c.convert(spec, pathlib.Path({str(tmp_path / 'x.tflite')!r})); c.close()\n"
        "assert r['ok'], r\n"
        "print(sorted(m for m in ('torch', 'litert_torch', 'jax') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_convert_cli_reports_every_bad_model_and_goes_on(bad_models, good_models, tmp_path):
    import shutil
    import subprocess

    for f in good_models.glob("*.py"):
        shutil.copy(f, bad_models / f.name)
    (bad_models / "memory_hog.py").unlink()  # covered above; it would need a low cap here
    out = subprocess.run([sys.executable, "-m", "nnlite_tui", "convert", str(bad_models), "--out", str(tmp_path / "o"),
                          "--timeout", "10", "--workers", "1"], capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    for name, stage in [("syntax_error", "import"), ("ctor_raises", "instantiate"), ("loops_forever", "timeout"),
                        ("uses_topk", "validate"), ("crashes_worker", "crash")]:
        line = next(x for x in lines if f" {name} " in x + " ")
        assert f"{stage}:" in line, line
        record = json.loads((tmp_path / "o" / f"{name}.json").read_text())
        assert record["stage"] == stage and not record["ok"]
    assert (tmp_path / "o" / "tiny_conv.tflite").exists()
    table = {x[:22].strip(): int(x[22:28]) for x in lines if len(x) >= 28 and x[22:28].strip().isdigit()}
    assert table["converted"] + table["cached"] == 2
    assert table["failed: timeout"] == 1 and table["failed: validate"] == 1
    assert table["total"] == 7


def test_convert_cli_missing_path_is_a_usage_error(tmp_path):
    import subprocess

    out = subprocess.run([sys.executable, "-m", "nnlite_tui", "convert", str(tmp_path / "nope"), "--out",
                          str(tmp_path / "o")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert str(tmp_path / "nope") in out.stderr


def test_channels_last_input_keeps_view_based_models_working(converter, tmp_path):
    spec = discover([str(FIXTURES / "view_flatten.py")])[0]
    result = converter.convert(spec, tmp_path / "view.tflite")
    assert result["ok"], result
    assert result["artifact_input_shape"] == [1, 32, 32, 3]
