"""The HTML report's data block on hand-made units: flags, ms per GFLOP, the per-family medians, the
columns' text stored once, and what travels of the raw samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnlite_tui.core.report.html_data import data_block
from nnlite_tui.core.report.html_source import HtmlRun, Unit, sketch
from nnlite_tui.core.report.rows import ResultRow


def unit(model: str, median_ms: float | None, flops: float | None = None, **kw) -> Unit:
    status = kw.pop("status", "done" if median_ms else "failed")
    throttled = kw.pop("throttled", None)
    row = ResultRow(model=model, family="", task=None, device="s1", device_label="Pixel 8", backend="xnnpack",
                    precision="fp32", status=status, flops=flops,
                    stats={"median_ns": median_ms * 1e6} if median_ms else {}, **kw)
    return Unit(row, None, throttled, None)


def block(units: list[Unit], statuses: dict[str, str] | None = None) -> dict:
    run = HtmlRun(Path("run"), units, statuses or {u.row.model: u.row.status for u in units}, {})
    return data_block(run)


def decoded(data: dict, column: str) -> list:
    return [None if v is None else data["strings"][v] for v in data["columns"][column]]


def test_flags_cause_and_ms_per_gflop_are_in_the_row():
    data = block([
        unit("rag-4555c3c648b5366adb7639062350714f", 2.0, flops=4e9, round_medians_ns=[2e6, 2e6, 2e6], stable=True,
             conversion={"validation": {"strength": "weak (outputs barely move)"}}),
        unit("rag-1b73f787c1fe22f11416e4d0409f2e6d", 3.0, flops=1e9, throttled=True,
             conversion={"compute_check": {"verdict": "mismatch"}}),
        unit("ga-mut-327", 5.0, round_medians_ns=[4e6, 5e6, 9e6], stable=False, instability=["spread 0.8 > 0.05"]),
        unit("ga-892", None, error_stage="lower", error_message="Lowering failed: aten::sort\nmore lines"),
    ])
    rows = dict(zip(data["columns"]["model"], zip(decoded(data, "flags"), data["columns"]["ms_gflop"],
                                                  decoded(data, "cause"), decoded(data, "family"))))
    assert rows["rag-4555c3c648b5366adb7639062350714f"] == ("weak", 0.5, None, "rag")
    assert rows["rag-1b73f787c1fe22f11416e4d0409f2e6d"] == ("one-round throttled compute", 3.0, None, "rag")
    assert rows["ga-mut-327"] == ("unstable", None, "spread 0.8 > 0.05", "ga-mut")
    assert rows["ga-892"] == (None, None, "Lowering failed: aten::sort\nmore lines", "ga")
    assert decoded(data, "family").count("rag") == 2 and data["strings"].count("rag") == 1


def test_family_summary_has_counts_and_medians():
    data = block([unit("rag-4555c3c648b5366adb7639062350714f", 2.0, flops=4e9),
                  unit("rag-1b73f787c1fe22f11416e4d0409f2e6d", 3.0, flops=1e9),
                  unit("rag-276d1d0d565794f7f55e1a26fe4c9084", None, error_stage="lower", error_message="x"),
                  unit("ga-892", 7.0),
                  unit("ga-893", None, error_stage="convert", error_message="the model draws random numbers",
                       conversion={"cause": "samples-at-inference"}),
                  unit("ga-894", None, error_stage="convert", error_message="y",
                       conversion={"cause": "samples-at-inference"})], statuses=None)
    families = {f["family"]: f for f in data["families"]}
    assert families["rag"] == {"family": "rag", "group": "Pixel 8 · fp32", "units": 3, "done": 2, "failed": 1,
                               "causes": "lower-error 1",
                               "median": 2.5, "ms_gflop": 1.75, "params": None, "flops": 2.5e9}
    assert families["ga"]["ms_gflop"] is None and families["ga"]["done"] == 1
    assert families["ga"]["causes"] == "samples-at-inference 2"  # the conversion's own cause code


def test_a_model_without_a_report_is_a_row_with_the_store_s_error():
    run = HtmlRun(Path("run"), [unit("ga-892", 7.0)], {"ga-892": "done", "ga-893": "failed", "ga-894": "queued"},
                  {"ga-893": {"stage": "convert", "message": "worker died"}})
    data = data_block(run)
    assert data["columns"]["model"] == ["ga-892", "ga-893", "ga-894"]
    assert decoded(data, "status") == ["done", "failed", "queued"]
    assert decoded(data, "stage")[1:] == ["convert", None] and decoded(data, "cause")[1] == "worker died"
    assert len(data["details"]) == 1  # details only for units with a report


def test_the_sketch_keeps_the_histogram_and_the_run_order():
    samples = [10.0] * 90 + [20.0] * 9 + [1000.0]  # p99 of these (type 7) is 29.8
    s = sketch(samples, {"min_ns": 10.0, "p99_ns": 29.8})
    assert s.count == 100 and s.above_p99 == 1 and sum(s.hist_counts) == 99
    assert s.hist_counts[0] == 90 and s.hist_counts[12] == 9  # 20 sits at (20 - 10) / (19.8 / 24) = 12.1
    assert s.bucket == 2 and len(s.timeline_ns) == 50 and s.timeline_ns[0] == 10.0
    assert s.timeline_ns[-1] == pytest.approx(510.0)  # the median of the last bucket: 20 and 1000


def _committed_run(tmp_path: Path) -> Path:
    import shutil

    src = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "schema4-runtimes"
    dest = tmp_path / "run"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("models"))
    for path in dest.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("@RUN@", str(dest)))
    return dest


def test_the_streaming_reader_gives_the_data_of_the_in_memory_rows(tmp_path, monkeypatch):
    """read_run (one report at a time, two processes on a large run; then from the parts file it
    left) and rows.load_run (all in memory) make the same data block of a committed run in two
    runtimes with a failed unit."""
    from nnlite_tui.core.report import html_parts
    from nnlite_tui.core.report.html_parts import read_run
    from nnlite_tui.core.report.html_source import from_results
    from nnlite_tui.core.report.rows import load_run
    from nnlite_tui.core.run_dir import REPORT_PAGES_FILE

    monkeypatch.setattr(html_parts, "PARALLEL_FROM", 2)  # the two reader processes of a large run
    dest = _committed_run(tmp_path)
    streamed = data_block(read_run(dest))
    assert streamed == data_block(from_results(load_run(dest)))
    assert len(streamed["columns"]["model"]) == 4 and "failed" in decoded(streamed, "status")
    parts = dest / REPORT_PAGES_FILE
    assert len(parts.read_bytes().splitlines()) == 4  # one part per report, kept for the next page
    assert data_block(read_run(dest)) == streamed
    assert len(parts.read_bytes().splitlines()) == 4  # nothing read again


def test_a_part_is_used_only_while_its_report_is_unchanged(tmp_path, monkeypatch):
    """A report rewritten after its part was kept is read again (its new figure shows); a torn or
    foreign line in the parts file is read around, never trusted."""
    import json

    from nnlite_tui.core.report import html_parts
    from nnlite_tui.core.report.html_parts import read_run
    from nnlite_tui.core.run_dir import REPORT_PAGES_FILE

    dest = _committed_run(tmp_path)
    first = data_block(read_run(dest))
    done = [i for i, st in enumerate(decoded(first, "status")) if st == "done"]
    model = first["columns"]["model"][done[0]]
    report = next(p for p in (dest / "reports").glob("*.json")
                  if json.loads(p.read_text())["model_name"] == model)
    doc = json.loads(report.read_text())
    doc["benchmark"]["median_ns"] = doc["benchmark"]["median_ns"] * 3
    report.write_text(json.dumps(doc))
    parts = dest / REPORT_PAGES_FILE
    with parts.open("ab") as f:
        f.write(b'{"v": 1, "file": "x.json", "row": {"model": 5}}\n{"torn')
    calls = []
    real = html_parts.read_one
    monkeypatch.setattr(html_parts, "read_one", lambda path: calls.append(path.name) or real(path))
    again = data_block(read_run(dest))
    assert calls == [report.name]  # only the changed report was opened
    assert again["columns"]["median"][done[0]] == pytest.approx(3 * first["columns"]["median"][done[0]], rel=1e-3)
