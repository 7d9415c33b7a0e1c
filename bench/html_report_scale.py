"""The HTML report of a 10,000-model run: file size, build time and memory, and the page in Chromium.

    .venv/bin/python bench/html_report_scale.py RUN_DIR [--models 10000] [--keep DIR]

RUN_DIR is any real run with a valid report: its richest report is the template (raw samples,
conversion and device blocks). The synthetic run is bench/tui_synthetic.py's store (its names made
LEMUR-like, `<Family>-<md5>`, so that families group) with a report per finished model written by
bench/html_report_size.py's `synthetic` (a share failed at different stages, a quarter also in fp16);
a model the store marks failed gets a failed report with the store's error. The run's report index and
the page parts file (core/report/html_parts.py) are built before timing, as the pipeline's report
writer keeps them while writing. `--repeats N` generates the page N times and quotes the median.

Measured:
- `nnlite report RUN --format html` as a subprocess: wall and CPU time, and peak memory as the summed RSS of
  its process tree sampled every 20 ms (the reader may use two processes) and as ru_maxrss;
- headless Chromium (DevTools protocol, tests/results/cdp.py) at 1,400 x 1,000: time from navigation
  until the table is built and answers clicks (window.nnliteReady, set by the page), then, in the page
  with performance.now(), each action until the next frame has been painted: sort by median, filter
  by a word, clear the filter, open a row's details; beside each, the CPU time of the page's main
  thread (DevTools' ThreadTime), which does not grow with the machine's load as the wall time does.

Targets (issue 39): <= 10 MB, <= 10 s, <= 500 MB; interactive <= 3 s; each action <= 200 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import psutil  # noqa: E402

import html_report_size  # noqa: E402
import tui_synthetic  # noqa: E402
from nnlite_tui.core.report import html_parts  # noqa: E402
from nnlite_tui.core.results import RunResults as ReportFolder, load_reports  # noqa: E402
from nnlite_tui.core.run_dir import REPORT_PAGES_FILE, report_filename  # noqa: E402
from tests.results.cdp import Browser, find_chromium  # noqa: E402

NEXT_FRAME = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"


def lemur_names(count: int) -> tuple[str, ...]:
    families = html_report_size.FAMILIES
    return tuple(f"{families[i % len(families)]}-{hashlib.md5(str(i).encode()).hexdigest()}" for i in range(count))


def build_run(run_dir: Path, template_run: Path, models: int) -> int:
    """The store and the reports; returns the number of reports."""
    valid = [r for r in load_reports(template_run) if r.get("valid")]
    if not valid:
        raise SystemExit(f"{template_run}: no valid report to derive from")
    base = max(valid, key=lambda r: len(r["benchmark"].get("samples_ns") or []))
    tui_synthetic.names = lemur_names  # build_store names its models through this
    tui_synthetic.build_store(run_dir, models)
    state = {rec["name"]: rec for rec in _records(run_dir)}
    rng = random.Random(0)
    (run_dir / "reports").mkdir(exist_ok=True)
    written = 0
    for i, name in enumerate(lemur_names(models)):
        rec = state[name]
        if rec.get("status") not in ("done", "failed"):
            continue
        reports = html_report_size.synthetic(base, i, rng)
        for report in reports:
            report["model_name"] = name
            report["model"]["name"] = name
        if rec["status"] == "failed":
            failed = reports[0]
            failed.update(valid=False, error=dict(rec["error"]), error_message=rec["error"]["message"])
            failed["benchmark"] = {"settings": base["benchmark"]["settings"]}
            reports = [failed]
        for report in reports:
            suffix = "__fp16" if report.get("precision") == "fp16" else ""
            path = run_dir / "reports" / report_filename(name + suffix, "host", "xnnpack")
            path.write_text(json.dumps(report))
            written += 1
    return written


def _records(run_dir: Path) -> list[dict]:
    from nnlite_tui.core.store.files import load_snapshot

    return load_snapshot(run_dir)[1]


def generate(run_dir: Path, out: Path) -> dict[str, float]:
    env_path = {"PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = psutil.Popen([sys.executable, "-m", "nnlite_tui", "report", str(run_dir), "--format", "html", "-o",
                         str(out)], env={**__import__("os").environ, **env_path}, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [proc, *proc.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    output = proc.stdout.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"report failed: {output}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the report and its reader processes, all waited for
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": wall, "cpu": cpu, "tree_peak_mb": peak / 1e6, "maxrss_mb": after.ru_maxrss / 1024,
            "mb": out.stat().st_size / 1e6}


def main_thread_cpu(browser: Browser) -> float:
    """CPU seconds the page's main thread has used (DevTools' ThreadTime): what an action costs whatever
    else the machine is running, where the wall time in the page also counts waiting for a core."""
    return {m["name"]: m["value"] for m in browser.send("Performance.getMetrics")["metrics"]}["ThreadTime"]


def timed(browser: Browser, action: str) -> tuple[float, float]:
    """Milliseconds from the action until the next frame is painted, measured in the page with
    performance.now(), and the main thread's CPU milliseconds over the same span."""
    cpu = main_thread_cpu(browser)
    wall = browser.evaluate(f"(async () => {{ const t = performance.now(); {action}; await {NEXT_FRAME}; "
                            "return performance.now() - t; })()")
    return wall, (main_thread_cpu(browser) - cpu) * 1000


def in_browser(page: Path) -> dict[str, float]:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile, Browser(chromium, Path(profile)) as browser:
        browser.send("Performance.enable", {"timeDomain": "threadTicks"})
        browser.send("Page.navigate", {"url": page.as_uri()})
        deadline = time.monotonic() + 60
        while browser.evaluate("window.nnliteReady === undefined ? null : window.nnliteReady") is None:
            if time.monotonic() > deadline:
                raise SystemExit("the page did not become interactive within 60 s")
            time.sleep(0.05)
        figures = {"interactive_ms": browser.evaluate("window.nnliteReady"), "load_cpu_ms": main_thread_cpu(browser) * 1000}
        head = "document.querySelector('#models .tabulator-col[tabulator-field=\"median\"] .tabulator-col-title')"
        figures["sort_ms"] = timed(browser, f"{head}.click()")
        text = "const f = document.getElementById('filter-text'); f.value = {!r}; f.dispatchEvent(new Event('input'))"
        figures["filter_ms"] = timed(browser, text.format("vgg fp16"))
        figures["filtered_rows"] = browser.evaluate("+document.getElementById('shown').textContent")
        figures["clear_filter_ms"] = timed(browser, text.format(""))
        figures["expand_ms"] = timed(browser, "document.querySelectorAll('#models .tabulator-row')[3].click()")
        figures["detail_shown"] = browser.evaluate("!document.getElementById('detail').hidden")
        problems = browser.problems()
        if problems.exceptions or problems.console_errors:
            raise SystemExit(f"page errors: {problems.exceptions} {problems.console_errors}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a real run whose richest valid report is the template")
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build the synthetic run (and page) here and keep them")
    parser.add_argument("--repeats", type=int, default=1, help="generate the page this many times; the median is quoted")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.keep or Path(tmp)).resolve()  # the browser opens the page by a file:// URI
        run_dir = work / "synthetic-run"
        if not (run_dir / "reports").is_dir():
            run_dir.mkdir(parents=True)
            n_reports = build_run(run_dir, args.run_dir, args.models)
        else:
            n_reports = len(list((run_dir / "reports").glob("*.json")))
        # The pipeline keeps the run's report index and each report's page part as it writes the report
        # (core.results, core.report.html_parts): build them here, outside the timing, as a real run has them.
        ReportFolder(run_dir)
        if not (run_dir / REPORT_PAGES_FILE).exists():
            for report in sorted((run_dir / "reports").glob("*.json")):
                html_parts.add(run_dir, report)
        page = work / "report.html"
        runs = [generate(run_dir, page) for _ in range(args.repeats)]
        gen = sorted(runs, key=lambda g: g["seconds"])[len(runs) // 2]  # the median run
        page_figures = in_browser(page)
    print(f"models: {args.models}, reports: {n_reports}")
    print(f"html size: {gen['mb']:.2f} MB (target <= 10)")
    if len(runs) > 1:
        print("generation runs:", ", ".join(f"{g['seconds']:.2f} s" for g in runs))
    print(f"generation: {gen['seconds']:.2f} s wall (target <= 10), {gen['cpu']:.2f} s CPU, peak memory {gen['tree_peak_mb']:.0f} MB summed "
          f"over the process tree, {gen['maxrss_mb']:.0f} MB ru_maxrss (target <= 500)")
    f = page_figures
    print(f"chromium: interactive after {f['interactive_ms']:.0f} ms (target <= 3000; main thread CPU until then "
          f"and a moment after: {f['load_cpu_ms']:.0f} ms)")
    print("in the page, ms until the next frame (main thread CPU ms), targets <= 200: " + ", ".join(
        f"{name} {f[key][0]:.0f} ({f[key][1]:.0f})" for name, key in (
            ("sort by median", "sort_ms"), (f"filter ({f['filtered_rows']} rows left)", "filter_ms"),
            ("clear the filter", "clear_filter_ms"), ("open a row", "expand_ms"))))
    print("loadavg:", Path("/proc/loadavg").read_text().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
