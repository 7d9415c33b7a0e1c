"""`nnlite report --format html` on real runs: what the page holds, and that it stands alone."""

from __future__ import annotations

import copy

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from .runs import derive_run, nnlite, scale


class Inventory(HTMLParser):
    """Plots, table bodies and every reference to another resource in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: list[str] = []
        self.bodies: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and a.get("data-plot"):
            self.plots.append(a["data-plot"])
        if tag == "tbody":
            self.bodies.append(a.get("data-status", ""))
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(a[key])
        if tag == "link":
            self.external.append(str(a))


def render(run: Path, out: Path) -> str:
    proc = nnlite("report", str(run), "--format", "html", "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"wrote {out}" in proc.stdout
    return out.read_text()


def inventory(page: str) -> Inventory:
    inv = Inventory()
    inv.feed(page)
    return inv


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


def test_page_of_a_real_run_has_summary_plots_failures_and_one_row_per_model(real_runs, tmp_path):
    page = render(real_runs[0], tmp_path / "run.html")
    inv = inventory(page)
    assert {"latency-vs-params", "latency-vs-size", "latency-distribution", "failures-by-stage"} <= set(inv.plots)
    # every conversion counts PyTorch's FLOPs (model.flops): they have their plot; one device/precision
    assert "latency-vs-flops" in inv.plots and "paired" not in inv.plots
    assert sorted(inv.bodies) == ["done", "done", "failed"]
    assert inv.plots.count("histogram") == 2 and inv.plots.count("timeline") == 2  # the two benchmarked models
    assert inv.external == []  # nothing to load: no src, no href, no stylesheet link
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert re.search(r'<div class="card status-failed"><b>1</b>failed', page)
    assert "validate" in page  # uses_topk's failure stage, in the summary and the top errors
    assert "STABLEHLO_SORT" in page or "topk" in page.lower()


def test_default_output_is_inside_the_run_and_variants_add_their_plots(real_runs, tmp_path):
    run = derive_run(real_runs[0], tmp_path / "run", add_variants)
    proc = nnlite("report", str(run), "--format", "html")
    assert proc.returncode == 0, proc.stderr
    inv = inventory((run / "report.html").read_text())
    assert "latency-vs-flops" in inv.plots and "paired" in inv.plots
    page = (run / "report.html").read_text()
    assert "fp16" in page and "Top ops" in page and "CONV_2D" in page and "Convolution (NHWC, F32) IGEMM" in page
    assert "kernel 3x3, stride 1x1, → 1x32x32x64" in page and "by type: CONV_2D 86%" in page
    assert len(inv.bodies) == 5  # 2 models x (fp32, fp16) + the failed one


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
    page = render(run, tmp_path / "run.html")
    assert "paired" in inventory(page).plots
    model = json.loads(next((run / "reports").glob("tiny_conv__*")).read_text())["device"]["model"]
    assert f"{model} (host)" in page and f"{model} (emulator-5554)" in page
