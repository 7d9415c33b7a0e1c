"""`nnlite report --format html` on real runs: what the page holds, and that it stands alone."""

from __future__ import annotations

import copy

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from nnlite_tui.core.report.html_data import lemur_family

from .runs import derive_run, nnlite, scale


class Inventory(HTMLParser):
    """Every reference to another resource in a page, and its data block."""

    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self._in_data = False
        self.data_text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(a[key])
        if tag == "link":
            self.external.append(str(a))
        self._in_data = tag == "script" and a.get("id") == "nnlite-data"

    def handle_data(self, data):
        if self._in_data:
            self.data_text += data

    def handle_endtag(self, tag):
        self._in_data = False

    @property
    def data(self) -> dict:
        return json.loads(self.data_text)


def render(run: Path, out: Path) -> str:
    proc = nnlite("report", str(run), "--format", "html", "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"wrote {out}" in proc.stdout
    return out.read_text()


def inventory(page: str) -> Inventory:
    inv = Inventory()
    inv.feed(page)
    return inv


def units(data: dict) -> list[dict]:
    """The data block's columns as one dict per table row, text decoded."""
    cols, strings = data["columns"], data["strings"]
    text = {"family", "task", "device", "runtime", "backend", "precision", "status", "flags", "stage", "cause"}
    return [{k: (strings[v[i]] if k in text and v[i] is not None else v[i]) for k, v in cols.items()}
            for i in range(len(cols["model"]))]


def add_variants(name: str, report: dict) -> dict | None:
    """An fp16 twin of each valid report (slower samples), with FLOPs and a profiled ops block."""
    if not report["valid"]:
        return None
    report["model"]["flops"] = 1000.0 * report["model"]["params"]
    twin = {**copy.deepcopy(report), "precision": "fp16"}
    scale(twin, 1.3)
    twin["benchmark"]["ops"] = {"kernel_mode": "xnnpack", "flops": 2000.0 * report["model"]["params"], "ops": [
        {"index": 0, "type": "CONV_2D", "avg_us": 12.5, "params": {"kernel": "3x3", "stride": "1x1"},
         "outputs": [{"shape": [1, 32, 32, 64], "dtype": "float32"}], "kernels": ["Convolution (NHWC, F32) IGEMM"]},
        {"index": 1, "type": "MEAN", "avg_us": 1.5}, {"index": 2, "type": "FULLY_CONNECTED", "avg_us": 0.5}]}
    return twin


def test_page_of_a_real_run_has_summary_figures_failures_and_one_row_per_model(real_runs, tmp_path):
    page = render(real_runs[0], tmp_path / "run.html")
    inv = inventory(page)
    rows = {r["model"]: r for r in units(inv.data)}
    assert sorted(r["status"] for r in rows.values()) == ["done", "done", "failed"]
    reports = {json.loads(p.read_text())["model_name"]: json.loads(p.read_text())
               for p in (real_runs[0] / "reports").glob("*.json")}
    for name, row in rows.items():
        report = reports[name]
        if row["status"] == "done":  # ms per GFLOP from the report's own median and FLOPs, to four digits
            expected = report["benchmark"]["median_ns"] / 1e6 / (report["model"]["flops"] / 1e9)
            assert row["ms_gflop"] == float(f"{expected:.4g}") and row["params"] == report["model"]["params"]
        else:  # the failure's cause is in the row itself, not only in its details
            assert row["stage"] == "validate" and "STABLEHLO_SORT" in row["cause"]
    details = [d for d in inv.data["details"] if "hist" in d]
    assert len(details) == 2 and all(sum(d["hist"][3]) + d["hist"][2] > 0 for d in details)
    assert {f["family"] for f in inv.data["families"]} == set(rows)  # fixture names have no LEMUR suffix
    # Nothing to load: no src, no href, no stylesheet link (the browser test also watches the network).
    assert inv.external == []
    assert re.search(r'<div class="card status-failed"><b>1</b>failed', page)
    assert '<table id="settings">' in page and "<td>rounds</td>" in page


def test_default_output_is_inside_the_run_and_variants_are_rows_and_pairs(real_runs, tmp_path):
    run = derive_run(real_runs[0], tmp_path / "run", add_variants)
    proc = nnlite("report", str(run), "--format", "html")
    assert proc.returncode == 0, proc.stderr
    data = inventory((run / "report.html").read_text()).data
    rows = units(data)
    assert len(rows) == 5 and sorted(r["precision"] for r in rows) == ["fp16", "fp16", "fp32", "fp32", "fp32"]
    assert data["pairs"] and len(data["pairs"][0]["pairs"]) == 2 and data["pairs"][0]["x"].endswith("fp32")
    ops = [d["ops"] for d in data["details"] if "ops" in d]
    assert len(ops) == 2 and data["strings"][ops[0][1][0][1]] == "CONV_2D" and ops[0][1][0][4] == 86.21
    assert data["strings"][ops[0][1][0][2]] == "kernel 3x3, stride 1x1, → 1x32x32x64"


def test_a_folder_without_reports_is_refused_with_its_name(tmp_path):
    proc = nnlite("report", str(tmp_path), "--format", "html")
    assert proc.returncode != 0 and str(tmp_path) in proc.stderr
    assert "no reports/ folder and no state.json" in proc.stderr


def test_two_devices_of_the_same_model_are_told_apart_and_paired(real_runs, tmp_path):
    def on_a_second_device(name: str, report: dict) -> dict | None:
        if not report["valid"]:
            return None
        return {**report, "device": {**report["device"], "serial": "emulator-5554"}}

    run = derive_run(real_runs[0], tmp_path / "run", on_a_second_device)
    data = inventory(render(run, tmp_path / "run.html")).data
    assert data["pairs"]
    model = json.loads(next((run / "reports").glob("tiny_conv__*")).read_text())["device"]["model"]
    assert {f"{model} (host)", f"{model} (emulator-5554)"} <= {r["device"] for r in units(data)}


def test_lemur_families():
    assert lemur_family("rag-4555c3c648b5366adb7639062350714f") == "rag"
    assert lemur_family("ga-mut-327") == "ga-mut"
    assert lemur_family("ast-dimension-AlexNet-23c87617b501b3716f80dd4691fc274a") == "ast-dimension-AlexNet"
    assert lemur_family("wide_conv") == "wide_conv"
