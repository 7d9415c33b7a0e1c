"""Failures a user meets, through the real CLI: one line naming the file or argument, no traceback,
and the exit code of its class (docs/reference/exit-codes.md)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nnlite_tui.exit_codes import ExitCode
from tests.conftest import FIXTURES, REPO

FAST = ("--headless", "--runs", "5", "--min-seconds", "0", "--max-seconds", "1", "--warmup", "1",
        "--warmup-seconds", "0", "--rounds", "1")


def nnlite(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def one_clean_line(result: subprocess.CompletedProcess) -> str:
    """The error line; and no traceback anywhere."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert lines, result.stderr
    return lines[-1]


@pytest.fixture(scope="module")
def done_run(tmp_path_factory) -> Path:
    """A finished one-model run, copied by the tests that damage it."""
    base = tmp_path_factory.mktemp("done")
    models = base / "models"
    models.mkdir()
    shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", models)
    result = nnlite("run", str(models), "--out", str(base / "run"), *FAST)
    assert result.returncode == 0, result.stderr
    return base


def copy_run(done_run: Path, dest: Path) -> tuple[Path, Path]:
    shutil.copytree(done_run, dest)
    return dest / "models", dest / "run"


def test_report_on_a_corrupt_state_names_it(done_run, tmp_path):
    _, run = copy_run(done_run, tmp_path / "c")
    (run / "state.json").write_text('{"meta": {')
    for args in (("report", str(run)), ("report", str(run), "--format", "html"), ("status", str(run))):
        result = nnlite(*args)
        assert result.returncode == ExitCode.STATE, (args, result.stderr)
        assert str(run / "state.json") in one_clean_line(result)


def test_a_corrupt_report_is_named_set_aside_and_measured_again(done_run, tmp_path):
    models, run = copy_run(done_run, tmp_path / "c")
    [report] = (run / "reports").glob("*.json")
    report.write_text("{bad")
    status = nnlite("status", str(run))
    assert status.returncode == 0 and f"{report}: unreadable report" in status.stdout
    exported = nnlite("report", str(run))
    assert exported.returncode == ExitCode.STATE and str(report) in one_clean_line(exported)
    rerun = nnlite("run", str(models), "--out", str(run), *FAST)
    assert rerun.returncode == 0 and "Traceback" not in rerun.stderr, rerun.stderr
    assert "measured again" in rerun.stdout + rerun.stderr
    assert report.with_name(report.name + ".corrupt").read_text() == "{bad"
    assert nnlite("report", str(run), "--format", "jsonl").returncode == 0


def test_a_second_writer_gets_its_own_code_naming_the_other_process(done_run, tmp_path):
    models, run = copy_run(done_run, tmp_path / "c")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from nnlite_tui.core.store import RunStore
        store = RunStore({str(run)!r})
        print("ready", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "ready"
        result = nnlite("run", str(models), "--out", str(run), *FAST)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    line = one_clean_line(result)
    assert result.returncode == ExitCode.BUSY
    assert f"pid {holder.pid}" in line and str(run) in line and "load_snapshot" not in line


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only tmpfs needs root")
def test_a_read_only_out_is_a_disk_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        result = nnlite("run", str(FIXTURES / "good_models"), "--out", str(ro / "run"), *FAST)
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    line = one_clean_line(result)
    assert result.returncode == ExitCode.DISK and str(ro / "run") in line and "Read-only" in line


@pytest.mark.parametrize("value", ["abc", "99999", "-1"])
def test_a_bad_adb_port_is_a_usage_error(value):
    result = nnlite("devices", env={"ANDROID_ADB_SERVER_PORT": value})
    assert result.returncode == ExitCode.USAGE
    assert f"ANDROID_ADB_SERVER_PORT={value!r}" in one_clean_line(result)


def test_debug_adds_the_traceback(tmp_path):
    result = nnlite("--debug", "devices", env={"ANDROID_ADB_SERVER_PORT": "abc"})
    assert result.returncode == ExitCode.USAGE and "Traceback" in result.stderr
    after = nnlite("devices", "--debug", env={"ANDROID_ADB_SERVER_PORT": "abc"})
    assert after.returncode == ExitCode.USAGE and "Traceback" in after.stderr


def test_bad_source_entries_are_skipped_and_named(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", models)
    shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", models / ("a" * 200 + ".py"))
    shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", os.fsencode(models) + b"/caf\xe9.py")
    (models / "dangling.py").symlink_to("nowhere.py")
    (models / "loop.py").symlink_to("loop.py")
    (models / "folder.py").mkdir()
    result = nnlite("run", str(models), "--out", str(tmp_path / "run"), *FAST)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 5, result.stderr
    for name, why in (("a" * 200 + ".py", "bytes long"), ("caf\\xe9.py", "not valid UTF-8"),
                      ("dangling.py", "link to nothing"), ("loop.py", "loop"), ("folder.py", "not a regular file")):
        assert any(f"{models / name}: skipped" in w and why in w for w in warnings), (name, warnings)
    assert "done 1" in result.stdout


def test_a_unit_whose_files_cannot_be_written_fails_alone(tmp_path):
    out = tmp_path / "run"
    (out / "logs" / "tiny_conv.log").mkdir(parents=True)  # its log cannot be written
    result = nnlite("run", str(FIXTURES / "good_models"), "--out", str(out), *FAST)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "done 1" in result.stdout and "failed 1" in result.stdout, result.stdout
    summary = (out / "summary.csv").read_text()
    assert "tiny_conv.log: Is a directory" in summary


def strict_json(text: str):
    def refuse(name: str):
        raise ValueError(f"bare {name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_outputs_without_a_value_to_check_fail_validation_saying_why(tmp_path):
    result = nnlite("run", str(FIXTURES / "bad_outputs"), "--out", str(tmp_path / "run"), *FAST)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    causes = {}
    for path in (tmp_path / "run" / "reports").glob("*.json"):
        report = strict_json(path.read_text())
        causes[report["model_name"]] = (report.get("error") or {}).get("message") or ""
    assert "10 NaN of 10 values" in causes["nan_output"]
    assert "10 Inf of 10 values" in causes["inf_output"]
    assert "returned no tensor" in causes["none_output"]
    assert "3 unit(s) failed on their own: a rerun keeps them failed; add --retry-failed" in result.stderr


def test_reports_are_strict_json_with_non_finite_values_noted(tmp_path):
    from nnlite_tui.core.report.document import write_json_atomic

    path = tmp_path / "r.json"
    write_json_atomic(path, {"benchmark": {"stats": {"mean_ns": float("nan"), "runs": [1.0, float("inf")]}}})
    data = strict_json(path.read_text())
    assert data["benchmark"]["stats"] == {"mean_ns": None, "runs": [1.0, None]}
    assert data["json_notes"] == ["benchmark.stats.mean_ns: nan written as null (JSON has no such number)",
                                  "benchmark.stats.runs[1]: inf written as null (JSON has no such number)"]


def test_compare_of_a_run_with_itself_says_so(done_run):
    run = done_run / "run"
    result = nnlite("compare", str(run), str(run / ".." / "run"))
    assert result.returncode == ExitCode.USAGE and "same run" in result.stderr


def test_limit_0_is_a_usage_error(tmp_path):
    result = nnlite("run", str(FIXTURES / "good_models"), "--out", str(tmp_path / "o"), "--limit", "0", "--headless")
    assert result.returncode == ExitCode.USAGE and "--limit" in result.stderr and "No models found" not in result.stderr


@pytest.mark.parametrize("args", [("--in-shape", "1,3,16384,16384"),
                                  ("--in-shape", "1,3,4096,4096", "--mem-cap-mb", "2048")])
def test_an_input_shape_over_the_memory_cap_is_refused_up_front(tmp_path, args):
    result = nnlite("run", str(FIXTURES / "good_models"), "--out", str(tmp_path / "o"), *args, *FAST, timeout=60)
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert f"--in-shape {args[1]}: a conversion at this size needs at least" in result.stderr
    assert not (tmp_path / "o").exists()


def test_a_file_without_net_is_named(tmp_path):
    model = tmp_path / "no_net.py"
    model.write_text("import torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n")
    result = nnlite("run", str(model), "--out", str(tmp_path / "o"), "--headless")
    assert result.returncode == ExitCode.USAGE and f"{model}: no class Net" in result.stderr


def test_an_unreadable_lemur_transform_is_named(tmp_path):
    tree = tmp_path / "lemur"
    shutil.copytree(FIXTURES / "lemur", tree)
    for transform in (tree / "ab" / "nn" / "transform").glob("*.py"):
        transform.write_text("def transform(:\n")
    result = nnlite("run", str(tree), "--out", str(tmp_path / "o"), "--exclude", "*", "--headless")
    assert result.returncode == ExitCode.NOTHING and "Traceback" not in result.stderr
    transform = tree / "ab" / "nn" / "transform" / "norm_flip.py"
    assert f"warning: {transform}: the transform cannot be read (SyntaxError in norm_flip.py)" in result.stderr
    assert "converting at 32x32" in result.stderr


def test_a_port_that_is_not_adb_is_named(tmp_path):
    import http.server

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = nnlite("devices", env={"ANDROID_ADB_SERVER_PORT": str(server.server_port)}, timeout=60)
    finally:
        server.shutdown()
    assert "Traceback" not in result.stderr and "Unknown data" not in result.stdout
    assert f"what listens on port {server.server_port} is not an adb server" in result.stdout


def test_an_adb_server_started_by_devices_is_reported(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = nnlite("devices", env={"ANDROID_ADB_SERVER_PORT": str(port)}, timeout=90)
    try:
        assert result.returncode == 0, result.stderr
        assert "started an adb server there" in result.stdout and "keeps running" in result.stdout
    finally:
        from nnlite_tui.core.devices.adb_link import adb_binary

        subprocess.run([adb_binary(), "-P", str(port), "kill-server"], capture_output=True, timeout=30)


def test_a_failure_of_the_environment_is_retried_by_a_plain_rerun(done_run, tmp_path):
    models, run = copy_run(done_run, tmp_path / "c")
    subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from nnlite_tui.core.store import RunStore
        with RunStore({str(run)!r}) as store:
            store.transition("tiny_conv", "failed", error={{"stage": "device:offline", "type": "DeviceError",
                                                           "message": "host: device offline"}})
        """)], check=True, cwd=REPO)
    rerun = nnlite("run", str(models), "--out", str(run), *FAST)
    assert rerun.returncode == 0, rerun.stderr
    assert "failed for want of disk or device" in rerun.stdout + rerun.stderr
    assert "[1/1] done" in rerun.stdout


def test_a_bug_is_one_line_that_says_so_and_debug_gives_the_traceback(capsys):
    from nnlite_tui.errors import report

    def bug():
        raise KeyError("internal_table")

    try:
        bug()
    except KeyError as exc:
        assert report(exc, debug=False) == ExitCode.INTERNAL
        quiet = capsys.readouterr().err
        assert report(exc, debug=True) == ExitCode.INTERNAL
        loud = capsys.readouterr().err
    assert quiet == "error: internal error: KeyError: 'internal_table' (a bug; rerun with --debug for the traceback)\n"
    assert "Traceback" in loud and "in bug" in loud


def test_a_file_without_supported_hyperparameters_is_said(tmp_path):
    model = tmp_path / "no_hp.py"
    model.write_text("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n")
    result = nnlite("run", str(model), "--out", str(tmp_path / "o"), "--exclude", "*", "--headless")
    assert f"warning: {model}: no supported_hyperparameters(); built with prm {{'dropout'" in result.stderr
