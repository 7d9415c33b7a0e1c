"""The ExecuTorch runtime with its real parts: the unit names, the availability check, a real .pte of a
one-channel model (the stride trap) converted in a real worker, its program read without ExecuTorch
and checked against ExecuTorch's own binding, the inputs re-set before every run (and why they must
be), and the host benchmark and ETDump profile in a fresh process."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.runtimes import RuntimeUnavailable, check_available, get_runtime, parse_runtimes
from nnlite_tui.core.sources.discover import discover
from nnlite_tui.core.sources.units import expand, model_of, parse_unit
from tests.conftest import REPO

LENET = REPO / "sample_models" / "mnist_lenet.py"  # one input channel: NHWC strides must be plain


def test_unit_names_carry_the_runtime_and_litert_fp32_keeps_the_plain_name(tmp_path):
    specs = discover([str(LENET)], precisions=("fp32", "int8"), runtimes=("litert", "executorch"))
    assert [(s.name, s.runtime, s.precision) for s in specs] == [
        ("mnist_lenet", "litert", "fp32"), ("mnist_lenet@executorch", "executorch", "fp32"),
        ("mnist_lenet@int8", "litert", "int8"), ("mnist_lenet@executorch@int8", "executorch", "int8")]
    for spec in specs:
        assert parse_unit(spec.name) == ("mnist_lenet", spec.runtime, spec.precision)
        assert model_of(spec.name, spec.precision, spec.runtime) == "mnist_lenet"
    # A LiteRT fp32 spec is the one of a run before runtimes existed: same dict, same cache key.
    plain = discover([str(LENET)])[0]
    assert specs[0] == plain and "runtime" not in plain.to_dict()
    assert len({s.key() for s in specs}) == 4
    assert [s.name for s in expand([plain], ("fp32",), ("executorch",))] == ["mnist_lenet@executorch"]
    assert parse_runtimes("all") == ("litert", "executorch")
    with pytest.raises(ValueError, match="unknown runtime tvm"):
        parse_runtimes("litert,tvm")


def test_a_run_without_executorch_says_the_runtime_is_unavailable(tmp_path, monkeypatch):
    from nnlite_tui.cli import main

    monkeypatch.setitem(sys.modules, "executorch", None)  # the package is missing: find_spec sees none
    with pytest.raises(RuntimeUnavailable, match="ExecuTorch is not installed here"):
        check_available(("litert", "executorch"))
    check_available(("litert",))
    result = CliRunner().invoke(main, ["run", str(LENET), "--runtime", "all", "--out", str(tmp_path / "r"),
                                       "--headless"])
    assert result.exit_code == 2, result.output
    assert "the runtime is unavailable: --runtime executorch: ExecuTorch is not installed here (missing " \
           "executorch): pip install 'nnlite-tui[executorch]'" in result.output
    assert not (tmp_path / "r").exists()  # refused before anything was started


def test_settings_executorch_cannot_honour_are_refused_by_the_runtime_before_the_run(tmp_path):
    from nnlite_tui.cli import main

    result = CliRunner().invoke(main, ["run", str(LENET), "--runtime", "all", "--backend", "gpu",
                                       "--out", str(tmp_path / "r"), "--headless"])
    assert result.exit_code == 2, result.output
    assert "--backend gpu with --runtime executorch: an ExecuTorch program's delegates are fixed at export" \
        in result.output
    assert not (tmp_path / "r").exists()  # refused before anything was started


@pytest.fixture(scope="module")
def lenet_pte(tmp_path_factory) -> tuple[Path, dict]:
    """mnist_lenet converted to a .pte by a real conversion worker."""
    out = tmp_path_factory.mktemp("pte")
    spec = discover([str(LENET)], runtimes=("executorch",))[0]
    with Converter(ConvertOptions(workers=1, timeout_s=300), log_dir=out, runtimes=("executorch",)) as converter:
        result = converter.convert(spec, out / "mnist_lenet@executorch.pte", out / "lenet.log")
    assert result["ok"], result
    return Path(result["artifact_path"]), result


def test_a_one_channel_model_converts_validates_and_counts_what_xnnpack_took(lenet_pte):
    path, result = lenet_pte
    assert result["runtime"] == "executorch" and result["converter_version"] == importlib.metadata.version("executorch")
    assert result["layout"] == "NHWC" and result["artifact_input_shape"] == [1, 28, 28, 1]
    assert result["max_abs_diff"] < 1e-5 and result["validation"]["strength"] == "strong"
    d = result["delegation"]
    # LeNet's adaptive average pool has no XNNPACK config: it splits the graph into two partitions.
    assert (d["delegated_ops"], d["total_ops"], d["partitions"]) == (15, 16, 2)
    assert d["portable_ops"] == {"aten._adaptive_avg_pool2d": 1}
    assert d["not_delegated_because"] == {"aten._adaptive_avg_pool2d": "XNNPACK has no partitioner config for this op"}
    assert d["backends"] == ["XnnpackBackend"]
    assert path.suffix == ".pte" and path.stat().st_size == result["artifact_bytes"]


def test_the_conversion_cache_keeps_the_program_as_model_pte(lenet_pte):
    from nnlite_tui.core.convert.cache import ConversionCache, default_cache_dir

    _, result = lenet_pte
    stored = ConversionCache(default_cache_dir()).artifact_of(result["key"])
    assert stored is not None and stored.name == "model.pte"


def test_the_program_reader_agrees_with_executorch_s_own_binding(lenet_pte):
    import torch  # noqa: F401  (the binding needs libtorch)
    from executorch.extension.pybindings import _C

    from nnlite_tui.core.runtimes.executorch.program import read_program

    path, _ = lenet_pte
    facts = read_program(str(path))
    meta = _C._load_program(str(path)).load_method("forward").method_meta()
    assert facts.input_shapes == [list(meta.input_tensor_meta(i).sizes()) for i in range(meta.num_inputs())]
    assert facts.input_dtypes == ["float32"]
    assert (facts.backends, facts.delegate_calls, facts.kernels) == (
        ["XnnpackBackend"], 2, {"aten::_adaptive_avg_pool2d.out": 1})
    assert get_runtime("executorch").app_extras(str(path)) == {
        "runtime": "executorch", "input_shapes": "[[1,28,28,1]]", "input_dtypes": '["float32"]'}
    with pytest.raises(ValueError, match="not an ExecuTorch program"):
        read_program(str(LENET))


def test_inputs_set_once_are_overwritten_so_the_session_sets_them_before_every_run(lenet_pte):
    """The hazard, measured: LeNet's memory plan reuses its input buffer, so a second execute() on inputs
    set once computes something else. The session re-sets them, and then every run agrees."""
    import numpy as np
    import torch

    from nnlite_tui.core.runtimes.executorch.session import open_session

    path, _ = lenet_pte
    session = open_session(str(path), BenchSettings())
    detail = session.inputs()[0]
    session.set_input(detail, np.random.default_rng(0).standard_normal(detail["shape"]).astype(np.float32))
    session.reset_inputs()
    session.invoke()
    first = session.method.get_outputs()[0].clone()
    session.invoke()  # inputs not set again
    assert not torch.equal(session.method.get_outputs()[0], first)
    for _ in range(3):
        session.reset_inputs()
        session.invoke()
        assert torch.equal(session.method.get_outputs()[0], first)


def test_the_host_benchmark_times_method_execute_in_a_fresh_process_with_an_etdump_profile(lenet_pte):
    from nnlite_tui.core.devices.local import LocalDevice

    path, _ = lenet_pte
    device = LocalDevice(prestart=False, runtimes=("executorch",))
    try:
        block = device.benchmark(Artifact(str(path), "executorch"),
                                 BenchSettings(warmup=2, runs=20, min_seconds=0.0, profile_ops="xnnpack",
                                               profile_runs=10), "t")
    finally:
        device.close()
    assert block["valid"], block
    assert (block["runtime"], block["runtime_version"]) == ("executorch", importlib.metadata.version("executorch"))
    assert block["timing"] == {"stats_of": "wall", "wall_clock": "Method.execute", "native_clock": None}
    assert block["native_stats"] is None and block["native_samples_ns"] is None
    assert block["stats"]["count"] == len(block["samples_ns"]) >= 20
    assert block["input_shapes"] == [[1, 28, 28, 1]] and block["output_shapes"] == [[1, 10]]
    d = block["delegation"]
    assert (d["source"], d["backends"], d["partitions"], d["full"]) == ("method metadata", ["XnnpackBackend"], 2, False)
    assert block["backend_used"] == "xnnpack" and block["fallback_reason"] is None
    ops = block["ops"]
    assert ops["source"] == "etdump" and ops["runs_kept"] == 10 and not ops.get("error")
    kinds = {(op["kind"], op["partition"]) for op in ops["ops"]}
    assert ("kernel", None) in kinds and {p for k, p in kinds if k == "delegate_op"} == {0, 1}
    assert [op["type"] for op in ops["ops"] if op["kind"] == "kernel"] == ["_adaptive_avg_pool2d.out"]
    # XNNPACK's operators read whole µs and nothing is added to a reading (ops schema 4); the run holds
    # all of them; the block is checked as every runtime's, here and where a report is read back.
    delegated = [op for op in ops["ops"] if op["kind"] == "delegate_op"]
    assert all(op["min_us"] == int(op["min_us"]) for op in delegated if op["timing"] == "measured")
    assert all(op["avg_us"] is None and op["upper_us"] == 1.0 for op in delegated if op["timing"] != "measured")
    assert ops["ops_sum_us"] <= ops["total_us"] + ops["rounding_bound_us"]
    assert ops["valid"] is True and "truncation_added_us" not in ops
    from nnlite_tui.core.ops.block_versions import read_block

    assert read_block(ops)["valid"] is True, read_block(ops).get("invalid_reasons")


def test_a_precision_the_runtime_does_not_make_is_skipped_without_a_worker(tmp_path):
    from nnlite_tui.core.convert.step import Attempt, convert_step
    from nnlite_tui.core.outcomes import Skipped
    import threading

    spec = discover([str(LENET)], precisions=("fp16",), runtimes=("executorch",))[0]
    assert spec.name == "mnist_lenet@executorch@fp16"
    converter = Converter(ConvertOptions(workers=1), log_dir=tmp_path, n_workers=1)
    try:
        outcome = convert_step(spec, converter, dest=tmp_path / "x.pte", log_path=tmp_path / "x.log",
                               cancel=threading.Event(), emit=lambda e: None, attempt=Attempt(1, 3, 0.0))
        assert converter.worker_pids() == []  # nothing was started for it
    finally:
        converter.close()
    assert isinstance(outcome, Skipped)
    assert (outcome.error.stage, outcome.error.type) == ("unsupported", "UnsupportedPrecision")
    assert outcome.error.message == "fp16 is not supported by this runtime (ExecuTorch makes fp32, int8)"


def test_a_worker_converting_again_and_again_keeps_its_memory(tmp_path):
    """executorch 1.5.1's lowering leaves every program it made (and its weights) in two caches; the
    runtime clears them after each job. A 67 MB model converted three times in one worker: without the
    clearing its memory grew by about twice the weights per conversion."""
    import psutil

    model = tmp_path / "wide_mlp.py"
    model.write_text("import torch\n\n\ndef make():\n    torch.manual_seed(0)\n"
                     "    net = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048))\n"
                     "    return net, torch.randn(1, 2048)\n")
    spec = discover([f"{model}:make"], runtimes=("executorch",))[0]
    rss = []
    with Converter(ConvertOptions(workers=1, use_cache=False, timeout_s=300), log_dir=tmp_path,
                   runtimes=("executorch",)) as converter:
        for i in range(3):
            result = converter.convert(spec, tmp_path / f"m{i}.pte", tmp_path / "m.log")
            assert result["ok"], result
            rss.append(psutil.Process(converter.worker_pids()[0]).memory_info().rss)
    assert rss[2] - rss[0] < 60 * 2**20, [r // 2**20 for r in rss]  # weights: 67 MB; a leak adds ~130 MB a job
