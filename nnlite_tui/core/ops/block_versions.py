"""Ops blocks of every schema version read as the current one: what each reader (report, HTML,
console, predict, the bench scripts) calls on a block before using it.

Schema 1 and 2 blocks wrote an op under a µs in every run as 0 µs, and a graph op no event timed as 0
µs too; schema 3 added half a µs to each XNNPACK operator's every reading (its `kernels` name each
operator, "builtin" a node event). Taking that half µs off again gives each op's readings back
exactly (to the 3 decimals they were written with), so an older block becomes the block schema 4
writes for the same profile: below-resolution and fused ops lose their invented time, and the sums
and shares follow. What an older block does not record (how many runs read each op) stays absent.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import cast

from nnlite_tui.core.ops.block import (BELOW_RESOLUTION, FUSED, MEASURED, RESOLUTION_US, SCHEMA_VERSION, OpsBlockJson,
                                       totals)
from nnlite_tui.core.ops.block_check import TIME_FIELDS, figure, kernels_of, mark_checked, rows_of

SCHEMA3_TRUNCATION_US = 0.5  # what schema 3 added to each XNNPACK operator's time


def _upgrade_row(row: Mapping[str, object], added_us: float) -> dict[str, object]:
    known = "kernels" in row  # a hand-written block may not say which events timed an op
    kernels = kernels_of(row)
    operators = sum(1 for k in kernels if k != "builtin")
    out = {k: v for k, v in row.items() if k not in TIME_FIELDS and k != "share"}
    raw: dict[str, float | None] = {}
    for key in TIME_FIELDS:
        value = figure(row, key)
        if value is not None:
            value = round(float(value) - added_us * operators, 3)
            value = 0.0 if abs(value) < 0.001 else value  # the 3 decimals the figures were written with
        raw[key] = value
    out.update(events=len(kernels) if known else None, resolved_runs=None, avg_us=None, median_us=None, min_us=None)
    if known and not kernels:
        out["timing"] = FUSED
    elif not raw["avg_us"]:  # 0 on average: every run read 0
        out.update(timing=BELOW_RESOLUTION, **({"upper_us": RESOLUTION_US * len(kernels)} if known else {}))
    else:
        out.update(timing=MEASURED, **raw)
    return out


def upgrade_block(block: Mapping[str, object]) -> dict[str, object]:
    """A copy of `block` in the current schema (a current or newer block, or one with `error`, as is)."""
    out = copy.deepcopy(dict(block))
    version = block.get("schema_version", 1)  # a block written without one (by hand) reads as the first
    if block.get("error") or not isinstance(version, int) or version >= SCHEMA_VERSION:
        return out
    added = SCHEMA3_TRUNCATION_US if version == 3 else 0.0
    rows = [_upgrade_row(r, added) for r in rows_of(block)]
    total = figure(block, "total_us")
    if total is not None and total <= 0:  # the profiler's cost was as large as the run (see block.resolved_total)
        out["total_note"] = (f"total_us {total} as written: the profiler's measured cost was not below the "
                             "profiled run, so the run's own time is below what the profile resolved")
        total = None
    out.pop("truncation_added_us", None)
    if added:
        operators = sum(1 for r in rows for k in kernels_of(r) if k != "builtin")
        out["truncation_removed_us"] = round(added * operators, 3)
    out.update(totals(rows, total), ops=rows, schema_version=SCHEMA_VERSION, upgraded_from=version)
    return out


def read_block(block: object) -> OpsBlockJson | None:
    """`block` in the current schema, checked (`valid`, `invalid_reasons`); anything but a JSON object is None."""
    if not isinstance(block, dict):
        return None
    # The checks have read every figure as a number (block_check.figure raises on any other value);
    # a block that fails them is kept and says so (`valid`, `invalid_reasons`).
    return cast(OpsBlockJson, mark_checked(upgrade_block(block)))
