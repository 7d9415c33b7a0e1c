"""The result views of a real run in both runtimes: summary.csv's runtime and ratio, the HTML report's
Runtimes section, and `nnlite compare --by runtime` with the statistics of a run-to-run comparison."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

import numpy as np
from scipy import stats

from nnlite_tui.core.report.compare import RANK_ALPHA
from nnlite_tui.core.report.compare_runtimes import compare_runtimes

from .runs import nnlite

MODELS = ("tiny_conv", "wide_conv")


def reports(run) -> dict[str, dict]:
    return {r["model_name"]: r for r in (json.loads(p.read_text()) for p in (run / "reports").glob("*.json"))}


def test_summary_rows_carry_the_runtime_and_the_ratio_of_the_reports_medians(both_runtimes):
    got = reports(both_runtimes)
    assert sorted(got) == sorted([*MODELS, *(f"{m}@executorch" for m in MODELS)])
    rows = {r["model"]: r for r in csv.DictReader((both_runtimes / "summary.csv").open())}
    for model in MODELS:
        litert, et = got[model], got[f"{model}@executorch"]
        assert (litert["runtime"], et["runtime"]) == ("litert", "executorch")
        assert litert["valid"] and et["valid"]
        assert rows[model]["runtime"] == "litert" and float(rows[model]["ratio_to_litert"]) == 1.0
        assert rows[f"{model}@executorch"]["runtime"] == "executorch"
        want = (et["duration"] / 1e6) / (litert["duration"] / 1e6)
        assert float(rows[f"{model}@executorch"]["ratio_to_litert"]) == pytest.approx(want, abs=1e-3)


def test_compare_by_runtime_pairs_each_model_with_the_run_to_run_statistics(both_runtimes):
    got = reports(both_runtimes)
    cmp = compare_runtimes(both_runtimes)
    assert {p.before.base_model for p in cmp.pairs} == set(MODELS)
    for pair in cmp.pairs:
        assert (pair.before.runtime, pair.after.runtime) == ("litert", "executorch")
        before, after = got[pair.before.model]["benchmark"], got[pair.after.model]["benchmark"]
        # Computed again from the reports' round medians, as two runs are compared: the ratio of their
        # geometric means, Welch's t interval on the logarithms, the rank test, and the verdict
        b = np.log([r["median_ns"] for r in before["rounds"]])
        a = np.log([r["median_ns"] for r in after["rounds"]])
        assert len(a) >= 3 and len(b) >= 3
        ci = np.exp(stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95))
        ratio = float(np.exp(a.mean() - b.mean()))
        p = stats.mannwhitneyu(a, b, alternative="greater" if ratio >= 1 else "less", method="exact").pvalue
        assert pair.ratio == pytest.approx(ratio) and pair.ci == pytest.approx(tuple(ci))
        want = ("slower" if ci[0] > 1.1 and p <= RANK_ALPHA else "faster" if ci[1] < 0.9 and p <= RANK_ALPHA
                else "within noise")
        assert pair.change == want
    out = nnlite("compare", "--by", "runtime", str(both_runtimes), "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["model"] for r in rows} == set(MODELS)
    text = nnlite("compare", "--by", "runtime", str(both_runtimes)).stdout
    assert f"before: litert in {both_runtimes}" in text and f"after:  executorch in {both_runtimes}" in text
    bad = nnlite("compare", "--by", "runtime", str(both_runtimes), "--runtimes", "litert,litert")
    assert bad.returncode == 2 and "two different runtimes" in bad.stderr


def test_the_html_report_shows_both_runtimes_per_model_with_a_scatter(both_runtimes, tmp_path):
    got = reports(both_runtimes)
    page = tmp_path / "report.html"
    assert nnlite("report", str(both_runtimes), "--format", "html", "-o", str(page)).returncode == 0
    html = page.read_text()
    section = html[html.index('<div id="runtimes">'):html.index("<h2>Failures")]
    assert "2 converted in litert and executorch" in section and 'data-plot="runtime-scatter"' in section
    data = json.loads(re.search(r'id="nnlite-data">(.*?)</script>', html).group(1))
    runtimes, strings = data["runtimes"], data["strings"]
    cols = runtimes["columns"]
    assert runtimes["runtimes"] == ["litert", "executorch"] and cols["model"] == sorted(MODELS)
    for i, model in enumerate(cols["model"]):
        delegation = got[f"{model}@executorch"]["conversion"]["delegation"]
        conversion = strings[cols["conversion"]["executorch"][i]]
        assert conversion == f"ok ({delegation['delegated_ops']}/{delegation['total_ops']} ops delegated)"
        ratio = got[f"{model}@executorch"]["benchmark"]["median_ns"] / got[model]["benchmark"]["median_ns"]
        assert cols["ratio"]["executorch"][i] == pytest.approx(ratio, rel=1e-3)
