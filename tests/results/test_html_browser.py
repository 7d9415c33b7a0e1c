"""The HTML report in a real browser (headless Chromium): no errors, no network, plots and table work.

Needs Debian's `chromium` package. Without it the test is skipped on a workstation and fails under
CI (CI=true), where the package is expected to be installed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from .cdp import Browser, find_chromium
from .runs import derive_run, nnlite
from .test_html_report import add_variants

pytestmark = pytest.mark.slow  # real conversions and runs

CHROMIUM = find_chromium()
SCREENSHOTS = "NNLITE_SCREENSHOTS"  # a folder: keep the report's screenshot there (scripts/html-report-screenshot.sh)


def keep_screenshot(shot: Path) -> None:
    if os.environ.get(SCREENSHOTS):
        shutil.copy(shot, Path(os.environ[SCREENSHOTS]) / shot.name)


def set_filter(browser: Browser, text: str = "", status: str = "") -> int:
    """Type into the filter box and pick a status as a person would; the number of rows left."""
    browser.evaluate(f"""(() => {{
        const f = document.getElementById('filter-text'); f.value = {text!r}; f.dispatchEvent(new Event('input'));
        const s = document.getElementById('filter-status'); s.value = {status!r};
        s.dispatchEvent(new Event('change'));
    }})()""")
    return browser.evaluate("Tabulator.findTable('#models')[0].getDataCount('active')")


def wait_for(browser: Browser, expression: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (value := browser.evaluate(expression)):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.05)
    return value


def box(browser: Browser, selector: str) -> dict:
    return browser.evaluate(f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect(); "
                            "return {left: r.left, right: r.right, width: r.width, height: r.height}; })()")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return CHROMIUM


def test_report_fits_the_page_answers_at_a_glance_and_sorts_filters_and_expands(real_runs, tmp_path, chromium):
    run = derive_run(real_runs[0], tmp_path / "run", add_variants)
    page = tmp_path / "report.html"
    assert nnlite("report", str(run), "--format", "html", "-o", str(page)).returncode == 0
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium, profile, width=1400) as browser:
        browser.load(page.as_uri())
        wait_for(browser, "window.nnliteReady")
        # no horizontal scrolling of the page at 1,400 px: the wide table scrolls inside itself
        assert browser.evaluate("document.documentElement.scrollWidth") <= 1400
        # the per-family table: a row per family and device · precision, with the median ms per GFLOP
        families = browser.evaluate("Tabulator.findTable('#families')[0].getData().map(r => [r.family, r.ms_gflop])")
        assert sorted(f for f, _ in families) == ["tiny_conv", "tiny_conv", "uses_topk", "wide_conv", "wide_conv"]
        assert all(v > 0 for f, v in families if f != "uses_topk")
        assert browser.evaluate("document.querySelector('#families').textContent").count("median ms / GFLOP") == 1
        # the ms/GFLOP column, on screen, with a figure in each benchmarked row
        header = box(browser, '#models .tabulator-col[tabulator-field="ms_gflop"]')
        assert 0 < header["left"] and header["right"] <= 1400
        cells = browser.evaluate("Array.from(document.querySelectorAll('#models .tabulator-cell"
                                 "[tabulator-field=\"ms_gflop\"]')).map(c => c.textContent)")
        assert len([c for c in cells if c]) == 4
        # the failed row's cause, on screen in the row itself
        cause = browser.evaluate("""(() => { const row = Array.from(document.querySelectorAll('#models .tabulator-row'))
            .find(r => r.textContent.includes('uses_topk'));
            const cell = row.querySelector('.tabulator-cell[tabulator-field="status"]');
            const text = cell.querySelector('.cause');
            return {text: text.textContent, left: text.getBoundingClientRect().left,
                    right: cell.getBoundingClientRect().right}; })()""")
        assert "validate: " in cause["text"] and "STABLEHLO_SORT" in cause["text"]
        assert cause["right"] - cause["left"] > 150 and cause["right"] <= 1400  # on screen, 150 px or more of it
        # the flags' legend is under the table; every plot draws (a canvas with a real box) or says why not
        assert "weak check" in browser.evaluate("document.getElementById('flag-legend').textContent")
        browser.evaluate("document.getElementById('plots').scrollIntoView()")
        drawn = wait_for(browser, "(() => { const p = Array.from(document.querySelectorAll('#plots .plot'));"
                         " return p.every(e => e.dataset.drawn) && p.map(e => e.querySelector('canvas') ?"
                         " e.getBoundingClientRect().width * e.getBoundingClientRect().height : e.textContent); })()")
        assert len(drawn) == 5 and all(isinstance(d, (int, float)) and d > 100_000 for d in drawn)  # 4 + a paired

        # sort by median: the fastest first, failed (no median) last
        browser.evaluate("document.querySelector('#models .tabulator-col[tabulator-field=\"median\"] "
                         ".tabulator-col-title').click()")
        medians = browser.evaluate("Tabulator.findTable('#models')[0].getData('active').map(r => r.median)")
        values = [v for v in medians if v is not None]
        assert values == sorted(values) and len(values) == 4 and medians[-1] is None

        # filter by words and by status
        assert set_filter(browser, "tiny fp16") == 1
        assert browser.evaluate("document.getElementById('shown').textContent") == "1"
        assert set_filter(browser, status="failed") == 1
        assert set_filter(browser, "conv", "done") == 4
        assert set_filter(browser) == 5

        # open a row: its histogram, timeline and top ops, inside the page
        browser.evaluate("Array.from(document.querySelectorAll('#models .tabulator-row')).find("
                         "r => r.textContent.includes('wide_conv') && r.textContent.includes('fp16')).click()")
        detail = browser.evaluate("(() => { const d = document.getElementById('detail'); return {hidden: d.hidden,"
                                  " text: d.textContent, canvases: d.querySelectorAll('canvas').length}; })()")
        assert not detail["hidden"] and "CONV_2D" in detail["text"] and detail["canvases"] == 2
        assert box(browser, "#detail")["right"] <= 1400
        assert browser.evaluate("document.documentElement.scrollWidth") <= 1400
        browser.evaluate("document.getElementById('detail').scrollIntoView()")
        shot = browser.screenshot(tmp_path / "report-expanded.png")
        assert shot.stat().st_size > 20_000  # a drawn page, not a blank one
        browser.evaluate("window.scrollTo(0, 0)")
        shot = browser.screenshot(tmp_path / "html-report.png", full_page=True)
        keep_screenshot(shot)

        problems = browser.problems()
    assert problems.exceptions == [] and problems.console_errors == []
    assert problems.requests == [page.as_uri()]  # the page itself and nothing else


def test_compare_page_renders_without_errors(real_runs, tmp_path, chromium):
    page = tmp_path / "compare.html"
    assert nnlite("compare", str(real_runs[0]), str(real_runs[1]), "--format", "html", "-o", str(page)).returncode == 0
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium, profile) as browser:
        browser.load(page.as_uri())
        wait_for(browser, "window.nnliteReady")
        assert browser.evaluate("Tabulator.findTable('#compare')[0].getDataCount()") == 3
        assert browser.evaluate("document.documentElement.scrollWidth") <= 1400
        verdict = browser.evaluate("""(() => { const s = document.getElementById('filter-change');
            s.value = 'failed'; s.dispatchEvent(new Event('change'));
            return Tabulator.findTable('#compare')[0].getData('active').map(r => r.model); })()""")
        assert verdict == ["uses_topk"]
        browser.screenshot(tmp_path / "compare.png")
        problems = browser.problems()
    assert problems.exceptions == [] and problems.console_errors == [] and problems.requests == [page.as_uri()]


def test_the_runtime_view_renders_and_its_screenshot_is_the_readme_s(both_runtimes, tmp_path, chromium):
    """The HTML report of a run in both runtimes: the Runtimes section with its scatter, drawn in a real
    browser (docs/runtime-view.png is this screenshot, kept by scripts/html-report-screenshot.sh)."""
    page = tmp_path / "report.html"
    assert nnlite("report", str(both_runtimes), "--format", "html", "-o", str(page)).returncode == 0
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium, profile) as browser:
        browser.load(page.as_uri())
        wait_for(browser, "window.nnliteReady")
        browser.evaluate("document.getElementById('runtimes').scrollIntoView()")
        box = wait_for(browser, "(() => { const p = document.querySelector('#plot-runtime-scatter');"
                       " return p.querySelector('canvas') && p.getBoundingClientRect().width *"
                       " p.getBoundingClientRect().height; })()")
        assert box > 10_000
        assert browser.evaluate("Tabulator.findTable('#runtime-table')[0].getDataCount()") == 2  # 2 models
        shot = browser.screenshot(tmp_path / "runtime-view.png", element="#runtimes")
        assert shot.stat().st_size > 10_000
        keep_screenshot(shot)
        problems = browser.problems()
    assert problems.exceptions == [] and problems.console_errors == [] and problems.requests == [page.as_uri()]
