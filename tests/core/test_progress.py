"""Phase lines: written as a phase begins, read back by the console; the benchmark protocol marks its
warm-up and timed runs outside any timed region."""

import numpy as np

from nnlite_tui.core.bench.protocol import run_protocol
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.progress import PhaseMark, parse_phase_line, phase_line


def test_a_phase_line_reads_back_and_other_lines_are_not_phases():
    line = phase_line("timed", 1.234, runs=50, max_s=60.0, warmup_mean_ms=2.5)
    assert line == "[nnlite] phase timed +1.23 s runs=50 max_s=60 warmup_mean_ms=2.5"
    assert parse_phase_line(line) == PhaseMark("timed", 1.23, {"runs": 50.0, "max_s": 60.0, "warmup_mean_ms": 2.5})
    for other in ("[nnlite] cached conversion 632fba6b (done)", "[nnlite] phase export", "phase build +1.0 s",
                  "[nnlite] phase Build +1.0 s"):
        assert parse_phase_line(other) is None, other


def test_phase_clock_says_when_each_phase_starts_before_timing_it():
    told = []
    clock = PhaseClock(on_start=lambda name: told.append((name, dict(clock.phases))))
    with clock.phase("build"):
        pass
    clock.started("export")
    assert [name for name, _ in told] == ["build", "export"]
    assert told[0][1] == {} and set(told[1][1]) == {"build"}  # told at the start, before the phase is timed


class CountingSession:
    """A loaded model whose inference counts its calls (what the protocol times)."""

    native = None
    timing = {"wall_clock": "perf_counter_ns"}
    reset_inputs = None  # the inputs stay where set_input put them (as LiteRT's)

    def __init__(self):
        self.calls = 0

    def invoke(self):
        self.calls += 1

    def inputs(self):
        return [{"index": 0, "shape": [1, 4], "dtype": np.float32, "quantization": None}]

    def set_input(self, detail, value):
        pass

    def output_shapes(self):
        return [[1, 4]]

    def delegation(self):
        return {}


def test_the_protocol_marks_warm_up_and_timed_runs_between_its_loops():
    session = CountingSession()
    seen = []
    settings = BenchSettings(warmup=3, runs=7, min_seconds=0, warmup_seconds=0)
    result = run_protocol(session, settings, lambda shape, dtype, seed, q, value_range=None: np.zeros(shape, dtype),
                          progress=lambda phase, **figures: seen.append((phase, session.calls, figures)))
    assert [(phase, calls) for phase, calls, _ in seen] == [("warmup", 1), ("timed", 1 + 3)]
    timed = seen[1][2]
    assert timed["runs"] == 7 and timed["warmup_runs"] == 3 and timed["max_s"] == settings.max_seconds
    assert timed["warmup_mean_ms"] * 1e6 == result["warmup_mean_ns"]
    assert result["stats"]["count"] == 7 and session.calls == 1 + 3 + 7
