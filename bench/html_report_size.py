"""Size and build time of `nnlite report --format html` for a 1,000-model run.

Makes N synthetic reports from one real one (a valid report of any run: its raw samples, conversion
and device blocks are kept), varying name, family, task, parameters, file size and latency, with a
share of failures at different stages and a second precision for some models, then builds the page.

    .venv/bin/python bench/html_report_size.py RUN_DIR [--models 1000] [--out report.html]

Prints the page's size, the bytes per model, and the time to load the reports and build the page.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from nnlite_tui.core.results import load_reports
from nnlite_tui.core.run_dir import report_filename
from nnlite_tui.core.report.html_report import build_html
from nnlite_tui.core.report.rows import load_run
from nnlite_tui.core.bench.stats import summarize

FAMILIES = ("AlexNet", "ResNet", "MobileNetV2", "DenseNet", "VGG", "SqueezeNet", "ShuffleNet", "FractalNet")
TASKS = ("img-classification", "img-segmentation", "obj-detection")
FAILURES = (("lower", "Lowering failed: aten::upsample_bicubic2d is not supported"),
            ("validate", "Didn't find op for builtin opcode 'STABLEHLO_SORT' version '1'"),
            ("timeout", "conversion took longer than 300 s"), ("benchmark:invoke", "RuntimeError: invoke failed"))


def synthetic(base: dict, i: int, rng: random.Random) -> list[dict]:
    family = FAMILIES[i % len(FAMILIES)]
    name = f"{family}-{rng.getrandbits(128):032x}"
    scale = 10 ** rng.uniform(-1, 2)
    report = copy.deepcopy(base)
    report["model_name"] = name
    report["model"].update(name=name, task=TASKS[i % 3 if i % 10 == 0 else 0],
                           params=int(base["model"]["params"] * scale * rng.uniform(0.5, 2)))
    report["conversion"]["artifact_bytes"] = int(report["model"]["params"] * 4.1)
    if rng.random() < 0.08:
        stage, message = FAILURES[i % len(FAILURES)]
        report.update(valid=False, error_message=f"{stage}: Error: {message}")
        report["error"] = {"stage": stage, "type": "Error", "message": message}
        report["benchmark"] = {"settings": base["benchmark"]["settings"]}
        return [report]
    samples = [s * scale for s in base["benchmark"]["samples_ns"]]
    report["benchmark"]["samples_ns"] = [int(s) for s in samples]
    report["benchmark"]["stats"] = summarize(samples)
    if i % 4:
        return [report]
    twin = copy.deepcopy(report)  # a quarter of the models also as fp16, a little faster
    twin["precision"] = "fp16"
    twin["benchmark"]["samples_ns"] = [int(s * 0.7) for s in samples]
    twin["benchmark"]["stats"] = summarize(twin["benchmark"]["samples_ns"])
    return [report, twin]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--out", type=Path, help="Keep the page here (default: a temporary file).")
    args = parser.parse_args()
    valid = [r for r in load_reports(args.run_dir) if r.get("valid")]
    if not valid:
        print(f"{args.run_dir}: no valid report to derive from", file=sys.stderr)
        return 2
    base = max(valid, key=lambda r: len(r["benchmark"].get("samples_ns") or []))
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "synthetic-run"
        (run_dir / "reports").mkdir(parents=True)
        n_reports = 0
        for i in range(args.models):
            for report in synthetic(base, i, rng):
                suffix = "__fp16" if report.get("precision") else ""
                path = run_dir / "reports" / report_filename(report["model_name"] + suffix, "host", "xnnpack")
                path.write_text(json.dumps(report))
                n_reports += 1
        t0, c0 = time.perf_counter(), time.process_time()
        run = load_run(run_dir)
        t1, c1 = time.perf_counter(), time.process_time()
        page = build_html(run)
        t2, c2 = time.perf_counter(), time.process_time()
    data = page.encode()
    if args.out:
        args.out.write_bytes(data)
    samples = len(base["benchmark"].get("samples_ns") or [])
    print(f"models: {args.models}, reports: {n_reports} (raw samples per report: {samples})")
    print(f"html size: {len(data) / 1e6:.2f} MB ({len(data) / n_reports / 1e3:.1f} kB per report)")
    print(f"load reports: {t1 - t0:.2f} s wall ({c1 - c0:.2f} s CPU), build page: {t2 - t1:.2f} s wall "
          f"({c2 - c1:.2f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
