"""Every conversion records where its time went: wall and CPU seconds per phase, in the result, the
report's conversion block and the conversion's event."""

from __future__ import annotations

import json
import threading

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.phases import PhaseClock, merged, totals
from nnlite_tui.core.convert.step import Attempt, convert_step
from nnlite_tui.core.events import ModelLog, RecordingReporter, StageFinished, event_from_dict
from nnlite_tui.core.progress import parse_phase_line
from nnlite_tui.core.run.jsonl import JsonlReporter
from nnlite_tui.core.outcomes import ConversionResult
from nnlite_tui.core.report.document import build_report
from nnlite_tui.core.sources.discover import discover

WORKER_PHASES = {"build", "reference", "export", "lower", "serialize", "validate", "hash"}


def test_a_fresh_conversion_records_every_phase_and_a_cache_hit_only_its_fetch(good_models, tmp_path):
    spec = next(s for s in discover([str(good_models)]) if s.name == "tiny_conv")
    opts = ConvertOptions(timeout_s=60, mem_cap_mb=2500, cache_dir=tmp_path / "cache", workers=1)
    with Converter(opts, log_dir=tmp_path, n_workers=1) as conv:
        rec = RecordingReporter()
        outcome = convert_step(spec, conv, dest=tmp_path / "a.tflite", log_path=tmp_path / "a.log",
                               cancel=threading.Event(), emit=rec.emit, attempt=Attempt(1, 1, 0.0))
        again = conv.convert(spec, tmp_path / "b.tflite")
    fresh = dict(outcome.result.details)
    assert fresh["ok"], fresh
    phases = fresh["phases"]
    assert WORKER_PHASES | {"worker_start", "cache_write"} <= set(phases), phases
    assert all(p["s"] >= 0 and p["cpu_s"] >= 0 for p in phases.values())
    # The worker's start imports torch and the converter: seconds of CPU, not a placeholder.
    assert phases["worker_start"]["cpu_s"] > 1.0
    assert phases["export"]["cpu_s"] > 0 and phases["lower"]["cpu_s"] > 0
    # The worker's phases cover its job: together they are nearly all of its wall time.
    worker_wall = sum(phases[p]["s"] for p in WORKER_PHASES)
    assert 0.9 * fresh["seconds"] <= worker_wall <= fresh["seconds"] + 0.01

    # Each phase was marked in the log as it began (streamed as ModelLog while the job ran), at the
    # second the worker's own totals put it: the phases before it, summed.
    marks = [m for m in (parse_phase_line(e.line) for e in rec.of(ModelLog)) if m is not None]
    order = [m.phase for m in marks]
    assert order == [p for p in ("build", "reference", "export", "lower", "serialize", "validate", "hash")
                     if p in phases], order
    elapsed = 0.0
    for mark in marks:
        assert abs(mark.at_s - elapsed) < 0.05 + 0.02 * elapsed, (mark, elapsed)
        elapsed += phases[mark.phase]["s"]

    finished = rec.of(StageFinished)[-1]
    assert finished.stage == "convert" and finished.phases == phases
    log = JsonlReporter(tmp_path)
    log.emit(finished)
    log.close()
    line = json.loads((tmp_path / "events.jsonl").read_text().splitlines()[-1])
    assert line["phases"] == phases and event_from_dict(line).phases == phases

    report = build_report(spec=spec, conversion=ConversionResult.from_converter(fresh), bench=None,
                          device={}, settings={}, run_id="r")
    assert report["conversion"]["phases"] == phases

    assert again["cached"] is True
    assert set(again["phases"]) == {"cache_fetch"}
    assert set(again["cached_phases"]) >= WORKER_PHASES  # what the entry cost when it was made


def test_phases_add_up_and_merge():
    clock = PhaseClock()
    with clock.phase("build"):
        sum(range(10000))
    clock.add("build", 1.0, 0.5)
    got = merged({"phases": clock.to_dict()}, {"build": {"s": 2.0, "cpu_s": 1.0}, "cache_write": {"s": 0.25}})
    assert got["phases"]["build"]["s"] >= 3.0 and got["phases"]["build"]["cpu_s"] >= 1.5
    assert got["phases"]["cache_write"] == {"s": 0.25, "cpu_s": 0.0}
    wall, cpu = totals(got["phases"])
    assert wall >= 3.25 and cpu >= 1.5
    assert merged({"ok": True}, {}) == {"ok": True}
