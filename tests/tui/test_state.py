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


def test_countdown_ticks_update_one_line_and_a_later_countdown_starts_another():
    from nnlite_tui.core.events import Recovery

    view = RunView(lambda: 100.0)
    target = "/dev/bus/usb/001/004/emulator-32399"
    view.apply(Recovery("reconnect", "emulator-5554", ts=0.0))
    for tick in range(5):  # a 10 s cool-down reports every 2 s
        view.apply(Recovery("cool-down", target, "too hot", countdown_s=10.0 - 2 * tick, ts=2.0 * tick))
    view.apply(Recovery("cool-down", "host", countdown_s=4.0, ts=9.0))  # another device: its own line
    cool = [e for e in view.notable if isinstance(e, Recovery) and e.action == "cool-down"]
    assert [(e.target, e.countdown_s) for e in cool] == [("host", 4.0), (target, 2.0)]
    assert len(view.notable) == 3
    view.apply(Recovery("cool-down", target, countdown_s=10.0, ts=300.0))  # long after: a new cool-down
    assert [e.countdown_s for e in view.notable if isinstance(e, Recovery) and e.target == target] == [10.0, 2.0]


def test_library_warnings_show_once_per_run_and_their_repeats_stay_in_the_log_file(tmp_path):
    from nnlite_tui.core.events import ModelLog

    warning = ("/usr/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is "
               "deprecated, use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.")
    source = "  return cls.__new__(cls, *args)"
    view = RunView(lambda: 0.0)
    for model in ("a", "b"):
        view.apply_all([ModelLog(model, "convert", warning), ModelLog(model, "convert", source),
                        ModelLog(model, "convert", warning), ModelLog(model, "convert", source),
                        ModelLog(model, "convert", f"[convert] {model}: 42 ops")])
    assert view.log_lines("a") == [f"[shown once per run] {warning}", source, "[convert] a: 42 ops"]
    assert view.log_lines("b") == ["[convert] b: 42 ops"]
    assert view.log_filter.hidden == 3
    assert view.take_fresh_lines() == {"a": view.log_lines("a"), "b": ["[convert] b: 42 ops"]}
    # a model whose lines are no longer in memory is read from its log file, filtered the same way
    view.run_dir = str(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "old.log").write_text("\n".join([warning, source, "kept", warning, source]) + "\n")
    assert view.log_lines("old") == ["kept"]
