"""Where the time goes: a model's top ops by time as a bar chart, from its report's ops block."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from nnlite_tui.core.ops.block import measured
from nnlite_tui.core.ops.block_versions import read_block

BAR_WIDTH = 30
TOP = 10


def op_label(op: dict[str, Any]) -> str:
    params = op.get("params") or {}
    detail = " ".join(f"{k}{params[k]}" for k in ("kernel", "stride") if k in params)
    if "cout" in params:
        detail += f" c{params.get('cin')}>{params['cout']}"
    return f"#{op.get('index')} {op.get('type')}" + (f" {detail}" if detail else "")


def _time(op: dict[str, Any], total_us: float | None) -> str:
    if measured(op):
        share = f"{float(op['avg_us']) / total_us:6.1%}" if total_us else f"{'':>6}"  # no total: no share
        return f"{float(op['avg_us']):9.1f} µs {share}"
    if op.get("timing") == "below_resolution":
        return f"{'< ' + format(float(op.get('upper_us') or 0), 'g'):>9} µs {'':>6}"  # read 0 in every run
    return f"{'fused':>9}    {'':>6}"  # no event of its own: its work is in a neighbour's time


def render_bars(block: dict[str, Any] | None, top: int = TOP, width: int = BAR_WIDTH) -> str:
    """Plain text: one line per op, longest first, bar length relative to the longest op; an op with
    no measured time (below the clock's resolution, or fused) shows what is known instead of a bar."""
    block = read_block(block)
    if not block:
        return "no per-op profile (run with --profile-ops)"
    if block.get("error"):
        return f"per-op profile failed: {block['error']}"
    ops = sorted(block.get("ops") or [], key=lambda o: -float(o["avg_us"]) if measured(o) else 0.0)[:top]
    if not ops:
        return "per-op profile has no ops"
    longest = max([float(o["avg_us"]) for o in ops if measured(o)] or [0.0]) or 1.0
    labels = [op_label(o) for o in ops]
    pad = max(len(label) for label in labels)
    total = block.get("total_us")
    lines = [f"{block.get('kernel_mode', '?')}: "
             + (f"{float(total) / 1e3:.3f} ms per run" if total is not None else "run total not resolved")
             + f", top {len(ops)} of {len(block.get('ops') or [])} ops"]
    if not block.get("valid", True):
        lines.insert(0, "per-op profile INVALID: " + "; ".join(block.get("invalid_reasons") or []))
    for op, label in zip(ops, labels):
        filled = round(width * float(op["avg_us"]) / longest) if measured(op) else 0
        lines.append(f"{label:<{pad}} {'█' * filled}{'·' * (width - filled)} {_time(op, total)}")
    return "\n".join(lines)


class OpBars(Static):
    """Shows render_bars() of one ops block; `show(block)` swaps the model."""

    DEFAULT_CSS = "OpBars { height: auto; }"

    def __init__(self, block: dict[str, Any] | None = None, *, top: int = TOP, **kwargs) -> None:
        super().__init__(render_bars(block, top), markup=False, **kwargs)
        self.top = top
        self.block = block

    def show(self, block: dict[str, Any] | None) -> None:
        self.block = block
        self.update(render_bars(block, self.top))

    @classmethod
    def from_report(cls, report: dict[str, Any], **kwargs) -> OpBars:
        return cls(((report.get("benchmark") or {}).get("ops")), **kwargs)
