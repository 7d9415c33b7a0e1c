"""RayConverter and the object-store transfer on a private Ray (`--cluster local`)."""

from __future__ import annotations

import os

import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

ray = pytest.importorskip("ray")

from nnlite_tui.core.cluster import transfer  # noqa: E402
from nnlite_tui.core.cluster.session import connect  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402
from nnlite_tui.core.spec import sha256_file  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    saved = dict(os.environ)  # a driver's connect() sets Ray's variables in its own environment
    session = connect("local")
    yield session
    session.shutdown()
    os.environ.clear()
    os.environ.update(saved)  # so that later tests' subprocesses do not inherit this private cluster's


@ray.remote
def _round_trip(chunks: list, dest: str, chunk: int) -> list:
    """On a worker: write the pieces, then send the file back in pieces of `chunk` bytes."""
    transfer.CHUNK = chunk
    transfer.write_file(chunks, dest)
    return transfer.put_file(dest)


def test_file_goes_out_and_back_in_pieces(cluster, tmp_path, monkeypatch):
    data = bytes(range(256)) * 41  # 10,496 bytes: several pieces, the last one short
    src = tmp_path / "model.tflite"
    src.write_bytes(data)
    monkeypatch.setattr(transfer, "CHUNK", 1000)
    chunks = transfer.put_file(src)
    assert len(chunks) == 11
    back = ray.get(_round_trip.remote(chunks, str(tmp_path / "remote.tflite"), 4096))
    assert len(back) == 3
    assert transfer.write_file(back, tmp_path / "back.tflite") == len(data)
    assert (tmp_path / "back.tflite").read_bytes() == data
    assert not list(tmp_path.glob("*.part"))


def test_cache_on_the_driver_and_a_lost_actor_is_a_transient_crash(cluster, tmp_path):
    from nnlite_tui.core.cluster.ray_converter import RayConverter

    spec = discover([str(REPO / "sample_models")], include=("mnist_lenet",))[0]
    options = ConvertOptions(cache_dir=tmp_path / "cache")
    converter = RayConverter(options, n_workers=1)
    try:
        # The actor is killed mid-conversion: the model's result is a transient crash, no exception.
        slot = converter._slots[0]
        killer = threading.Timer(3.0, lambda: ray.kill(slot.actor))
        killer.start()
        lost = converter.convert(spec, tmp_path / "a.tflite", tmp_path / "a.log")
        killer.join()
        assert not lost["ok"] and lost["stage"] == "crash" and lost["error_type"] == "NodeLost", lost
        assert "lost" in (tmp_path / "a.log").read_text()
        # A new actor was started in its place and converts; the .tflite comes back to the driver.
        done = converter.convert(spec, tmp_path / "b.tflite", tmp_path / "b.log")
        assert done["ok"] and not done["cached"], done
        assert sha256_file(tmp_path / "b.tflite") == done["artifact_sha256"]  # byte-exact from the worker
    finally:
        converter.close()
    # Closed: no actor left, yet the same model comes from the driver's cache.
    started = time.monotonic()
    again = converter.convert(spec, tmp_path / "c.tflite", tmp_path / "c.log")
    assert again["ok"] and again["cached"] and time.monotonic() - started < 5
    assert Path(tmp_path / "c.tflite").read_bytes() == (tmp_path / "b.tflite").read_bytes()


def test_a_derived_precision_is_made_by_an_actor_from_the_drivers_fp32_and_keyed_as_locally(cluster, tmp_path):
    from nnlite_tui.core.cluster.ray_converter import RayConverter
    from nnlite_tui.core.convert.converter import Converter

    fp32, int8 = discover([str(REPO / "sample_models")], include=("mnist_lenet",), precisions=("fp32", "int8"))
    options = ConvertOptions(cache_dir=tmp_path / "cache", calibration_samples=8)
    converter = RayConverter(options, n_workers=1)
    try:
        assert converter.convert(fp32, tmp_path / "fp32.tflite")["ok"]
        done = converter.convert(int8, tmp_path / "int8.tflite", tmp_path / "int8.log")
    finally:
        converter.close()
    assert done["ok"] and not done["cached"] and done["precision"] == "int8", done
    # fp32 came from the driver's cache and travelled to the actor with the job: not converted twice.
    assert done["fp32_cached"] and done["converter"] == "ai-edge-quantizer" and done["node"], done
    log = (tmp_path / "int8.log").read_text()
    assert "[nnlite] cached conversion" in log and "[nnlite] deriving int8 from" in log, log
    assert done["artifact_input_dtype"] == "int8" and done["quantization"]["input_quantization"]["scale"] > 0
    assert done["accuracy"]["precision"] == "int8" and done["accuracy"]["verdict"] == "ok"
    assert sha256_file(tmp_path / "int8.tflite") == done["artifact_sha256"]
    # The local converter finds both in the same cache under its own keys: nothing is converted again
    # (no worker is even started), so a run may switch between --cluster and local freely.
    local = Converter(options, n_workers=1)
    try:
        again = local.convert(int8, tmp_path / "again.tflite")
        assert again["cached"] and again["fp32_cached"] and again["key"] == done["key"], again
        assert not any(w.alive for w in local._all)
    finally:
        local.close()


def test_an_actors_worker_runs_model_code_in_the_sandbox(cluster, tmp_path):
    import json
    import shutil

    from nnlite_tui.core.cluster.ray_converter import RayConverter
    from tests.core.sandbox_helpers import SKIP_REASON, Listener, sandbox_here

    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    listener = Listener()
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(REPO / "tests" / "fixtures" / "sandbox_models" / "connects_out.py", folder)
    (folder / "targets.json").write_text(json.dumps({"port": listener.port}))
    spec = discover([str(folder / "connects_out.py")])[0]
    converter = RayConverter(ConvertOptions(cache_dir=tmp_path / "cache"), n_workers=1)
    try:
        result = converter.convert(spec, tmp_path / "c.tflite", tmp_path / "c.log")
    finally:
        converter.close()
        listener.close()
    # On this machine the actor could reach the listener: its worker's sandbox is what stopped the model.
    assert (result["stage"], result["cause"]) == ("instantiate", "network"), result
    assert f"the model tried to connect to 127.0.0.1:{listener.port}" in result["error_message"]
    assert listener.seen == []
