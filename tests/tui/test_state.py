"""RunView: the console's fold of pipeline events (no Textual needed)."""

from nnlite_tui.core.events import ModelLog, ModelStatus, RunControl, RunFinished, RunStarted, StageFinished, StageStarted
from nnlite_tui.core.progress import phase_line
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


def test_phase_lines_of_a_unit_in_flight_say_its_phase_since_when_and_what_the_earlier_ones_took():
    now = [1000.0]
    view = RunView(clock=lambda: now[0])
    view.apply(RunStarted("runs/x", ("m@int8",), ("host",), ts=900.0))
    view.apply(ModelStatus("m@int8", "converting", attempt=1, ts=960.0))
    # The tailer reads each line a little after the worker wrote it; the seconds in the line are the worker's.
    for phase, at, arrived in (("build", 0.0, 970.1), ("reference", 2.0, 972.2), ("lower", 12.0, 982.3)):
        view.apply(ModelLog("m@int8", "convert", phase_line(phase, at), ts=arrived))
    live = view.phases["m@int8"]
    assert live.began == 970.1 and live.current.phase == "lower"
    assert live.finished_phases() == [("build", 2.0), ("reference", 10.0)]
    text = live.describe(now[0])
    assert text.startswith("lower 18 s (from ") and text.endswith(", job 30 s")
    assert live.before() == "build 2.00 s, reference 10.0 s"
    view.apply(ModelLog("m@int8", "convert", phase_line("derive", 0.0), ts=990.0))  # counted from 0: a new job
    assert view.phases["m@int8"].current.phase == "derive" and view.phases["m@int8"].finished_phases() == []
    view.apply(ModelStatus("m@int8", "converted", attempt=1, ts=995.0))
    assert "m@int8" not in view.phases  # out of flight: nothing live to show


def test_timed_runs_show_the_caps_seconds_left_and_an_estimate_marked_as_one():
    view = RunView(clock=lambda: 1002.0)
    view.apply(ModelStatus("m", "benchmarking", attempt=1, device="host", ts=990.0))
    view.apply(ModelLog("m", "benchmark", phase_line("timed", 0.8, warmup_runs=5, warmup_mean_ms=100.0, runs=50,
                                                        min_s=1.0, max_runs=10000, max_s=60.0), ts=1000.0))
    text = view.phases["m"].describe(1002.0)
    assert text.startswith("timed runs 2.0 s (from ")
    assert "; cap 60 s, 58 s left, job " in text
    assert ", ~20 of ~50 runs, ~3.0 s to go by the warm-up's 100 ms a run;" in text


def test_the_slowest_conversion_is_named_once_it_runs_three_times_the_median():
    now = [1000.0]
    view = RunView(clock=lambda: now[0])
    view.apply(RunStarted("runs/x", ("a", "b", "c", "d", "slow", "young"), ("host",), ts=0.0))
    for name in ("a", "b", "c"):
        view.apply(StageFinished(name, "convert", True, 8.0, ts=500.0))
    view.apply(StageFinished("d", "convert", True, 0.01, detail="cached", ts=500.0))  # a cache hit is not a conversion
    view.apply(ModelStatus("slow", "converting", attempt=1, ts=980.0))
    view.apply(ModelStatus("young", "converting", attempt=1, ts=995.0))
    assert view.slow_conversion() is None  # 20 s < 3 x 8 s
    now[0] = 1005.0
    assert view.slow_conversion() == ("slow", 25.0, 8.0)
    view.apply(ModelStatus("slow", "converted", attempt=1, ts=1005.0))
    assert view.slow_conversion() is None  # "young" has run 10 s


def test_a_run_no_process_owns_any_more_stops_its_clock_at_its_last_event():
    now = [5000.0]
    view = RunView(clock=lambda: now[0])
    view.apply_all([RunStarted("runs/x", ("a", "b"), ("host",), ts=1000.0),
                    ModelStatus("a", "converting", attempt=1, ts=1100.0), ModelStatus("a", "done", attempt=1, ts=1400.0)])
    assert view.elapsed() == 4000.0  # a live runner: the clock runs
    view.runner_alive = False  # attached, and the runner is gone (killed, or the machine rebooted)
    assert view.elapsed() == 400.0 and view.eta_seconds() is None
    now[0] = 9000.0
    assert view.elapsed() == 400.0


def test_a_unit_in_flight_shows_its_lines_as_they_are_sent_not_also_from_its_file(tmp_path):
    """Followed before its first line was sent, a converting unit's log was read from its file, and the
    line then came again as an event: the log pane showed it twice."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text("[nnlite] waiting for the same job 0b6c, in flight for another unit\n")
    view = RunView(clock=lambda: 10.0)
    view.apply(RunStarted(str(tmp_path), ("a", "b"), ("host",), ts=0.0))
    view.apply(ModelStatus("a", "converting", attempt=1, ts=1.0))
    assert view.log_lines("a") == []  # its line is on its way as an event
    view.apply(ModelLog("a", "convert", "[nnlite] waiting for the same job 0b6c, in flight for another unit", ts=2.0))
    assert len(view.log_lines("a")) == 1
    (tmp_path / "logs" / "b.log").write_text("an earlier run's line\n")
    assert view.log_lines("b") == ["an earlier run's line"]  # not in flight: its file is all there is


def test_an_operators_pause_does_not_count_as_the_run_going_slower():
    now = [0.0]
    view = RunView(clock=lambda: now[0])
    names = [f"m{i}" for i in range(20)]
    view.apply(RunStarted("runs/x", tuple(names), ("host",), ts=0.0))
    for i, name in enumerate(names[:10]):  # one model a minute for ten minutes
        view.apply_all([ModelStatus(name, "converting", ts=60.0 * i), ModelStatus(name, "done", ts=60.0 * (i + 1))])
    view.apply(RunControl("pause", ts=600.0))
    now[0] = 600.0 + 3600.0  # an hour paused
    assert view.throughput_per_hour() == 60.0 and view.eta_seconds() == 600.0
    view.apply(RunControl("resume", ts=now[0]))
    now[0] += 60.0
    view.apply_all([ModelStatus(names[10], "converting", ts=now[0] - 60), ModelStatus(names[10], "done", ts=now[0])])
    assert view.throughput_per_hour() == 60.0  # eleven models in eleven running minutes


def test_the_followed_log_stays_on_the_latest_unit_to_enter_flight():
    """One unit converting, another benchmarking: their stage events alternate, the followed one does not."""
    view = RunView(lambda: 10.0)
    view.apply_all([RunStarted("r", ("a", "b"), ("host",), ts=0.0),
                    ModelStatus("a", "converting", ts=1.0), ModelStatus("b", "converting", ts=2.0)])
    assert view.followed() == "b"
    view.apply_all([ModelStatus("a", "benchmarking", ts=3.0), StageStarted("a", "benchmark", ts=3.0)])
    assert view.followed() == "b"  # a moved on to its benchmark; b is still the newest in flight
    view.apply(ModelStatus("b", "converted", ts=4.0))
    assert view.followed() == "a"
