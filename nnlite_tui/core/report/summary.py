"""RUN_DIR/summary.csv: one row per report (model x device), plus models that have none (skipped)."""

from __future__ import annotations

from pathlib import Path

from nnlite_tui.core.report.document import RATIO_KEY, summary_row, to_csv
from nnlite_tui.core.results import Report, RunResults
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME
from nnlite_tui.core.store.files import load_snapshot
from nnlite_tui.core.text_safety import printable

SUMMARY_FILE = "summary.csv"


def summary_rows(run_dir: Path) -> list[dict]:
    _, records = load_snapshot(run_dir)
    reports = list(RunResults(run_dir, strict=True))
    status = {r["name"]: r.get("status") for r in records}
    rows = []
    seen = set()
    for report in reports:
        name = report.model_name
        seen.add(name)
        row = summary_row(report)
        if status.get(name) == "skipped":
            row["status"] = "skipped"
        rows.append(row)
    add_speedups(rows, reports)
    add_runtime_ratios(rows, reports)
    for rec in records:
        if rec["name"] not in seen:
            err = rec.get("error") or {}
            spec = rec.get("spec") or {}
            rows.append({"model": rec["name"], "status": rec.get("status"), "error_stage": err.get("stage"),
                         "error": err.get("message"), "precision": spec.get("precision") or "fp32",
                         "runtime": spec.get("runtime") or DEFAULT_RUNTIME})
    return rows


def _model(row: dict, report: Report) -> str:
    return report.base_model or row["model"]


def add_speedups(rows: list[dict], reports: list[Report]) -> None:
    """speedup_vs_fp32 = the fp32 unit's median / this unit's, for the same model, runtime, device and
    backend, when both are in the run (1.0 on the fp32 row itself)."""
    def key(row: dict, report: Report) -> tuple:
        return (_model(row, report), row.get("runtime"), row.get("device"), row.get("backend"))

    fp32 = {key(row, report): row.get("median_ms") for row, report in zip(rows, reports)
            if row.get("precision") == "fp32" and row.get("median_ms")}
    for row, report in zip(rows, reports):
        base = fp32.get(key(row, report))
        if base and row.get("median_ms"):
            row["speedup_vs_fp32"] = round(base / row["median_ms"], 4)


def add_runtime_ratios(rows: list[dict], reports: list[Report]) -> None:
    """RATIO_KEY (ratio_to_litert) = this unit's median / the default runtime's unit's, for the same model,
    precision and device, when both are in the run (above 1: slower than the default runtime; 1.0 on its
    own row). The backend is what each runtime used, so it is not part of the match."""
    def key(row: dict, report: Report) -> tuple:
        return (_model(row, report), row.get("precision"), row.get("device"))

    default = {key(row, report): row.get("median_ms") for row, report in zip(rows, reports)
               if row.get("runtime") == DEFAULT_RUNTIME and row.get("median_ms")}
    for row, report in zip(rows, reports):
        base = default.get(key(row, report))
        if base and row.get("median_ms"):
            row[RATIO_KEY] = round(row["median_ms"] / base, 4)


def write_summary(run_dir: Path) -> Path:
    path = Path(run_dir) / SUMMARY_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(to_csv(summary_rows(Path(run_dir))))
    tmp.replace(path)
    return path


def _note(row: dict) -> str:
    if row.get("error"):
        return row["error"]
    if row.get("accuracy") == "degraded":
        return "accuracy degraded"
    if str(row.get("energy_valid")) == "False":  # the csv's text, or the row's bool
        return f"no energy figure: {row.get('energy_reason') or 'not measured'}"
    return ""


def print_table(path: Path, limit: int = 40) -> None:
    import csv

    import click

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        click.echo("no models")
        return
    width = min(48, max(len(r["model"] or "") for r in rows))
    # Energy per inference beside the latency when the run asked for it (empty: no valid figure).
    energy = any(r.get("energy_valid") not in (None, "") for r in rows)
    head = f" {'mJ/inf':>9}" if energy else ""
    click.echo(f"\n{'model':<{width}}  {'status':<8} {'device':<14} {'median ms':>10} {'p90 ms':>10}{head}  error")
    for r in rows[:limit]:
        med = f"{float(r['median_ms']):.3f}" if r.get("median_ms") else ""
        p90 = f"{float(r['p90_ms']):.3f}" if r.get("p90_ms") else ""
        mj = f" {float(r['energy_per_inference_mj']):>9.4g}" if r.get("energy_per_inference_mj") else f" {'':>9}"
        click.echo(f"{printable(r['model'] or '')[:width]:<{width}}  {r['status']:<8} "
                   f"{printable(r.get('device') or '')[:14]:<14} {med:>10} {p90:>10}{mj if energy else ''}  "
                   f"{printable(_note(r))[:90]}")
    if len(rows) > limit:
        click.echo(f"... {len(rows) - limit} more rows in {path}")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    click.echo("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"   ({path})")
