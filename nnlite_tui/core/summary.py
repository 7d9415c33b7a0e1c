"""RUN_DIR/summary.csv: one row per report (model x device), plus models that have none (skipped)."""

from __future__ import annotations

from pathlib import Path

from nnlite_tui.core.report import load_reports, summary_row, to_csv
from nnlite_tui.core.store.files import load_snapshot

SUMMARY_FILE = "summary.csv"


def summary_rows(run_dir: Path) -> list[dict]:
    _, records = load_snapshot(run_dir)
    reports = load_reports(run_dir)
    status = {r["name"]: r.get("status") for r in records}
    rows = []
    seen = set()
    for report in reports:
        name = report.get("model_name")
        seen.add(name)
        row = summary_row(report)
        if status.get(name) == "skipped":
            row["status"] = "skipped"
        rows.append(row)
    add_speedups(rows, reports)
    for rec in records:
        if rec["name"] not in seen:
            err = rec.get("error") or {}
            rows.append({"model": rec["name"], "status": rec.get("status"), "error_stage": err.get("stage"),
                         "error": err.get("message")})
    return rows


def add_speedups(rows: list[dict], reports: list[dict]) -> None:
    """speedup_vs_fp32 = the fp32 unit's median / this unit's, for the same model, device and backend,
    when both are in the run (1.0 on the fp32 row itself)."""
    def key(row: dict, report: dict) -> tuple:
        return ((report.get("model") or {}).get("base_name") or row["model"], row.get("device"), row.get("backend"))

    fp32 = {key(row, report): row.get("median_ms") for row, report in zip(rows, reports)
            if row.get("precision") == "fp32" and row.get("median_ms")}
    for row, report in zip(rows, reports):
        base = fp32.get(key(row, report))
        if base and row.get("median_ms"):
            row["speedup_vs_fp32"] = round(base / row["median_ms"], 4)


def write_summary(run_dir: Path) -> Path:
    path = Path(run_dir) / SUMMARY_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(to_csv(summary_rows(Path(run_dir))))
    tmp.replace(path)
    return path


def _note(row: dict) -> str:
    if row.get("error"):
        return row["error"]
    return "accuracy degraded" if row.get("accuracy") == "degraded" else ""


def print_table(path: Path, limit: int = 40) -> None:
    import csv

    import click

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        click.echo("no models")
        return
    width = min(48, max(len(r["model"] or "") for r in rows))
    click.echo(f"\n{'model':<{width}}  {'status':<8} {'device':<14} {'median ms':>10} {'p90 ms':>10}  error")
    for r in rows[:limit]:
        med = f"{float(r['median_ms']):.3f}" if r.get("median_ms") else ""
        p90 = f"{float(r['p90_ms']):.3f}" if r.get("p90_ms") else ""
        click.echo(f"{(r['model'] or '')[:width]:<{width}}  {r['status']:<8} {(r.get('device') or '')[:14]:<14} "
                   f"{med:>10} {p90:>10}  {_note(r)[:60]}")
    if len(rows) > limit:
        click.echo(f"... {len(rows) - limit} more rows in {path}")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    click.echo("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"   ({path})")
