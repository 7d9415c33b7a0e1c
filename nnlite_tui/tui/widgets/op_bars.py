"""Where the time goes: a model's top ops by time as a bar chart, from its report's ops block."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

BAR_WIDTH = 30
TOP = 10


def op_label(op: dict[str, Any]) -> str:
    params = op.get("params") or {}
    detail = " ".join(f"{k}{params[k]}" for k in ("kernel", "stride") if k in params)
    if "cout" in params:
        detail += f" c{params.get('cin')}>{params['cout']}"
    return f"#{op.get('index')} {op.get('type')}" + (f" {detail}" if detail else "")


def render_bars(block: dict[str, Any] | None, top: int = TOP, width: int = BAR_WIDTH) -> str:
    """Plain text: one line per op, longest first, bar length relative to the longest op."""
    if not block:
        return "no per-op profile (run with --profile-ops)"
    if block.get("error"):
        return f"per-op profile failed: {block['error']}"
    ops = sorted(block.get("ops") or [], key=lambda o: -float(o.get("avg_us") or 0.0))[:top]
    if not ops:
        return "per-op profile has no ops"
    longest = max(float(o.get("avg_us") or 0.0) for o in ops) or 1.0
    labels = [op_label(o) for o in ops]
    pad = max(len(label) for label in labels)
    lines = [f"{block.get('kernel_mode', '?')}: {float(block.get('total_us') or 0) / 1e3:.3f} ms per run, "
             f"top {len(ops)} of {len(block.get('ops') or [])} ops"]
    for op, label in zip(ops, labels):
        us = float(op.get("avg_us") or 0.0)
        filled = round(width * us / longest)
        lines.append(f"{label:<{pad}} {'█' * filled}{'·' * (width - filled)} {us:9.1f} µs "
                     f"{float(op.get('share') or 0.0):6.1%}")
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
