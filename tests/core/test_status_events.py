"""`nnlite status` reads events.jsonl from its end: the last notable events and the pause state."""

from __future__ import annotations

from nnlite_tui.core.run import event_log as status_events
from nnlite_tui.core.events import ModelLog, ModelStatus, RunControl, RunStarted
from nnlite_tui.core.run.jsonl import JsonlReporter


def write(run_dir, events):
    reporter = JsonlReporter(run_dir)
    for event in events:
        reporter.emit(event)
    reporter.close()


def test_last_events_skip_log_lines_and_span_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(status_events, "CHUNK", 300)  # lines cross chunk boundaries
    events = [RunStarted(str(tmp_path), ("a", "b"), ("host",))]
    for i in range(40):
        events += [ModelStatus(f"m{i}", "done", attempt=1, median_ms=float(i)),
                   ModelLog(f"m{i}", "convert", "x" * 120)]
    write(tmp_path, events)
    with open(tmp_path / "events.jsonl", "a") as f:
        f.write('{"type": "ModelStatus", "model": "cut sh')  # a line cut short by kill -9
    last = status_events.last_events(tmp_path, 5)
    assert [e.model for e in last] == ["m35", "m36", "m37", "m38", "m39"]
    assert len(status_events.last_events(tmp_path, 1000)) == 41  # fewer than asked: all of them
    assert status_events.last_events(tmp_path / "nowhere", 3) == []


def test_paused_is_the_latest_pause_or_resume_of_the_current_session(tmp_path):
    assert not status_events.paused(tmp_path)
    write(tmp_path, [RunStarted("r", ("a",), ()), RunControl("pause"), ModelLog("a", "convert", "x")])
    assert status_events.paused(tmp_path)
    write(tmp_path, [RunControl("skip", "a"), RunControl("resume"), RunControl("retry", "a")])
    assert not status_events.paused(tmp_path)
    write(tmp_path, [RunControl("pause")])
    assert status_events.paused(tmp_path)
    write(tmp_path, [RunStarted("r", ("a",), (), resumed=True)])  # a new session starts running
    assert not status_events.paused(tmp_path)


def test_status_sums_failures_by_family_and_cause():
    from nnlite_tui.commands.status_cmd import failures_by_family

    def failed(name: str, stage: str, kind: str, message: str) -> dict:
        return {"name": name, "status": "failed", "error": {"stage": stage, "type": kind, "message": message}}

    lines = failures_by_family([
        failed("ga-mut-12", "export", "SamplesAtInference", "the model samples random numbers at inference"),
        failed("ga-mut-13@executorch", "export", "SamplesAtInference", "the model samples random numbers at inference"),
        failed("ga-mut-14", "timeout", "Timeout", "took longer than 300 s"),
        failed("rag-4555c3c648b5366adb7639062350714f", "timeout", "Timeout", "took longer than 300 s"),
    ])
    assert lines[0] == "failures by family:"
    assert lines[1].split()[:2] == ["ga-mut", "3"] and "timeout 1" in lines[1]
    assert lines[2].split()[:3] == ["rag", "1", "timeout"]
    assert failures_by_family([]) == []
