"""The HTML report in a real browser (headless Chromium): no errors, no network, plots and table work.

Needs Debian's `chromium` package. Without it the test is skipped on a workstation and fails under
CI (CI=true), where the package is expected to be installed.
"""

from __future__ import annotations

import os

import pytest

from .cdp import Browser, find_chromium
from .runs import derive_run, nnlite
from .test_html_report import add_variants

CHROMIUM = find_chromium()


def set_filter(browser: Browser, text: str = "", status: str = "") -> int:
    """Type into the filter box and pick a status as a person would; the number of rows left."""
    browser.evaluate(f"""(() => {{
        const f = document.getElementById('filter-text'); f.value = {text!r}; f.dispatchEvent(new Event('input'));
        const s = document.getElementById('filter-status'); s.value = {status!r};
        s.dispatchEvent(new Event('change'));
    }})()""")
    return browser.evaluate("document.querySelectorAll('#models > tbody:not([hidden])').length")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return CHROMIUM


def test_report_renders_without_errors_and_its_table_sorts_filters_and_expands(real_runs, tmp_path, chromium):
    run = derive_run(real_runs[0], tmp_path / "run", add_variants)
    page = tmp_path / "report.html"
    assert nnlite("report", str(run), "--format", "html", "-o", str(page)).returncode == 0
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium, profile) as browser:
        browser.load(page.as_uri())
        plots = browser.evaluate("Array.from(document.querySelectorAll('svg.plot')).map(s => s.dataset.plot)")
        assert {"latency-vs-params", "latency-vs-size", "latency-vs-flops", "latency-distribution", "paired",
                "failures-by-stage"} <= set(plots)
        # the plots are laid out, not just present: each has a real box on screen
        sizes = browser.evaluate("Array.from(document.querySelectorAll('#plots svg.plot')).map("
                                 "s => s.getBoundingClientRect().width * s.getBoundingClientRect().height)")
        assert sizes and min(sizes) > 10_000
        assert browser.evaluate("document.querySelectorAll('#plots circle.pt').length") >= 4
        assert browser.evaluate("document.querySelectorAll('#models > tbody').length") == 5
        browser.screenshot(tmp_path / "report-top.png")

        # sort by median: the fastest first, failed (no median) last
        browser.evaluate("Array.from(document.querySelectorAll('#models th')).find("
                         "th => th.textContent === 'median ms').click()")
        medians = browser.evaluate("Array.from(document.querySelectorAll('#models > tbody')).map("
                                   "b => b.rows[0].cells[9].dataset.v)")
        values = [float(v) for v in medians if v]
        assert values == sorted(values) and medians[-1] == ""

        # filter by words and by status
        assert set_filter(browser, "tiny fp16") == 1
        assert browser.evaluate("document.getElementById('shown').textContent") == "1"
        assert set_filter(browser, status="failed") == 1
        assert set_filter(browser, "conv", "done") == 4
        assert set_filter(browser) == 5

        # expand a row: its histogram, timeline and top ops become visible
        browser.evaluate("Array.from(document.querySelectorAll('#models tr.row')).find("
                         "r => r.textContent.includes('wide_conv') && r.textContent.includes('fp16')).click()")
        visible = browser.evaluate(
            "Array.from(document.querySelectorAll('#models tr.detail:not([hidden]) svg.plot'))"
            ".filter(s => s.getBoundingClientRect().height > 0).map(s => s.dataset.plot)")
        assert visible == ["histogram", "timeline"]
        assert browser.evaluate("document.querySelector('#models tr.detail:not([hidden]) .ops').textContent"
                                ".includes('CONV_2D')")
        browser.evaluate("document.querySelector('#models tr.detail:not([hidden])').scrollIntoView()")
        shot = browser.screenshot(tmp_path / "report-expanded.png")
        assert shot.stat().st_size > 20_000  # a drawn page, not a blank one

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
        assert browser.evaluate("document.querySelectorAll('#compare tr').length") == 4
        browser.screenshot(tmp_path / "compare.png")
        problems = browser.problems()
    assert problems.exceptions == [] and problems.console_errors == [] and problems.requests == [page.as_uri()]


def test_the_runtime_view_renders_and_its_screenshot_is_the_readme_s(both_runtimes, tmp_path, chromium):
    """The HTML report of a run in both runtimes: the Runtimes section with its scatter, drawn in a real
    browser (the README's docs/runtime-view.png is such a screenshot; the test leaves the checkout as it is)."""
    page = tmp_path / "report.html"
    assert nnlite("report", str(both_runtimes), "--format", "html", "-o", str(page)).returncode == 0
    profile = tmp_path / "profile"
    profile.mkdir()
    with Browser(chromium, profile) as browser:
        browser.load(page.as_uri())
        box = browser.evaluate("(() => { const r = document.querySelector('#runtimes svg.plot').getBoundingClientRect();"
                               " return r.width * r.height; })()")
        assert box > 10_000
        assert browser.evaluate("document.querySelectorAll('#runtimes circle.pt').length") == 2
        assert browser.evaluate("document.querySelectorAll('#runtime-table tr').length") == 3  # header + 2 models
        shot = browser.screenshot(tmp_path / "runtime-view.png", element="#runtimes")
        assert shot.stat().st_size > 10_000
        problems = browser.problems()
    assert problems.exceptions == [] and problems.console_errors == [] and problems.requests == [page.as_uri()]
