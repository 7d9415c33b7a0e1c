"""RunView: the console's fold of pipeline events (no Textual needed)."""

from nnlite_tui.core.events import ModelStatus, RunControl, RunFinished, RunStarted
from nnlite_tui.tui.state import RATE_WINDOW, RunView


def test_models_finished_before_a_resume_do_not_count_toward_throughput():
    now = [1000.0]
    view = RunView(lambda: now[0])
    view.apply_all([RunStarted("r", ("a", "b", "c"), ("host",), resumed=True, ts=0.0),
                    ModelStatus("a", "done", attempt=1, ts=0.1),  # the runner reports the stored state
                    ModelStatus("b", "converting", attempt=1, ts=1.0),
                    ModelStatus("b", "done", attempt=1, ts=1800.0)])
    now[0] = 3600.0
    assert view.throughput_per_hour() == 1.0
    assert view.eta_seconds() == 3600.0  # c is left, at one an hour
    view.apply(RunFinished({"done": 2}, 1800.0, ts=3600.0))
    assert view.eta_seconds() is None


def test_throughput_of_a_long_run_is_over_the_last_completions():
    view = RunView(lambda: 7_000.0)  # just after the last completion
    names = [f"m{i}" for i in range(RATE_WINDOW + 50)]
    view.apply(RunStarted("r", tuple(names), ("host",), ts=0.0))
    for i, name in enumerate(names):  # slow at first (100 s each), then fast (10 s each)
        t = 100.0 * i if i < 50 else 5000.0 + 10.0 * (i - 50)
        view.apply_all([ModelStatus(name, "converting", ts=t), ModelStatus(name, "done", ts=t + 1)])
    rate = view.throughput_per_hour()
    assert 300 < rate < 400  # the recent pace (~360/h), not the session average


def test_operator_command_and_runner_echo_show_once_and_set_paused():
    view = RunView(lambda: 50.0)
    view.apply_all([RunControl("pause", ts=1.0), RunControl("pause", ts=2.0)])
    assert view.paused and sum(isinstance(e, RunControl) for e in view.notable) == 1
    view.apply_all([RunControl("skip", "m1, m2", ts=3.0), RunControl("skip", None, ts=3.1)])
    assert [e.action for e in view.notable if isinstance(e, RunControl)] == ["skip", "pause"]
    view.apply(RunControl("resume"))
    assert not view.paused


def test_the_log_follows_the_latest_model_still_in_flight():
    view = RunView(lambda: 0.0)
    view.apply_all([RunStarted("r", ("a", "b", "c"), ("host",), ts=0.0),
                    ModelStatus("a", "benchmarking", ts=1.0), ModelStatus("b", "converting", ts=2.0)])
    assert view.followed() == "b" and view.in_flight() == ["a", "b"]
    view.apply(ModelStatus("b", "converted", ts=3.0))  # waits for the device: a is the one working
    assert view.followed() == "a"
    view.apply(ModelStatus("a", "done", ts=4.0))
    assert view.followed() == "b" and view.in_flight() == []  # nothing in flight: the last one stays


def test_logs_stay_bounded_and_older_ones_come_from_the_run_directory(tmp_path):
    from nnlite_tui.core.events import ModelLog
    from nnlite_tui.tui.state import LOG_LINES_PER_MODEL, LOGS_KEPT

    view = RunView(lambda: 0.0)
    view.run_dir = str(tmp_path)
    for i in range(LOGS_KEPT + 10):
        for j in range(LOG_LINES_PER_MODEL + 5):
            view.apply(ModelLog(f"m{i}", "convert", f"line {j}"))
    assert len(view.logs) == LOGS_KEPT and "m0" not in view.logs
    assert view.log_lines(f"m{LOGS_KEPT + 9}")[-1] == f"line {LOG_LINES_PER_MODEL + 4}"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "m0.log").write_text("".join(f"file line {j}\n" for j in range(1000)))
    lines = view.log_lines("m0")
    assert len(lines) == LOG_LINES_PER_MODEL and lines[-1] == "file line 999"
    assert view.log_lines("never-ran") == []
