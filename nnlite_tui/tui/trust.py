"""A report's trust flags, read before its numbers: validation, stability, throttling, drift, compute.

The HTML report shows them; the console's detail screen showed the numbers alone, so a unit
validated on one input, or timed in one round whose samples went from 184 to 919 ms and climbed,
read as firm as any other. Each flag is (name, text, level): level "ok", "warn" or "bad"; a flag
whose fact the report lacks says so ("not recorded") rather than passing as fine.
"""

from __future__ import annotations

import statistics
from typing import Any

from nnlite_tui.core.results import Report

SPREAD_FACTOR = 2.0  # a single round's slowest sample this many times its fastest: flagged
DRIFT_LIMIT = 0.10  # a single round's last quarter of samples this much slower (or faster) than its first


def _extra(block: Any, key: str) -> Any:
    return (getattr(block, "model_extra", None) or {}).get(key)


def validation_flag(report: Report) -> tuple[str, str, str]:
    validation = report.conversion.validation
    strength = validation.strength if validation is not None else None
    if not strength:
        return "validation", "not recorded", "warn"
    assert validation is not None
    # a model that samples: its outputs were compared as distributions (guide/stochastic-models.md)
    how = " (samples: output distribution and deterministic part)" if validation.method == "distribution" else ""
    return "validation", f"{strength}{how}", "ok" if strength in ("strong", "accuracy") else "warn"


def stability_flags(report: Report) -> list[tuple[str, str, str]]:
    """Across rounds when there were several; within the one round's samples otherwise."""
    bench = report.benchmark
    rounds = [r for r in bench.rounds or [] if r.median_ns is not None]
    flags = []
    reasons = bench.stability.reasons if bench.stability else []
    drift = [r for r in reasons if "reference model moved" in r]
    if len(rounds) > 1 and bench.stability is not None:
        others = [r for r in reasons if r not in drift]
        verdict = bench.stability.verdict or "-"
        flags.append(("stability", f"{verdict} over {len(rounds)} rounds" + (f": {others[0]}" if others else ""),
                      "ok" if verdict == "stable" else "warn"))
    else:
        samples = [float(s) for s in bench.samples_ns or [] if s]
        if len(samples) >= 8:
            low, high = min(samples), max(samples)
            quarter = len(samples) // 4
            trend = statistics.median(samples[-quarter:]) / statistics.median(samples[:quarter]) - 1
            problems = []
            if high / low >= SPREAD_FACTOR:
                problems.append(f"samples spread {low / 1e6:.3g}-{high / 1e6:.3g} ms")
            if abs(trend) > DRIFT_LIMIT:
                problems.append(f"{'upward' if trend > 0 else 'downward'} drift {trend:+.0%} within the run")
            flags.append(("stability", "one round: " + ("; ".join(problems) if problems else "samples steady"),
                          "warn" if problems else "ok"))
        else:
            flags.append(("stability", "one round, too few samples to judge", "warn"))
    flags.append(("drift", drift[0] if drift else "no reference drift recorded" if len(rounds) > 1 else
                  "not checked (one round)", "warn" if drift or len(rounds) <= 1 else "ok"))
    return flags


def throttling_flag(report: Report) -> tuple[str, str, str]:
    conditions = report.conditions or report.benchmark.conditions
    if conditions is None or conditions.throttled is None:
        return "throttling", "not recorded", "warn"
    return ("throttling", "throttled while timing", "bad") if conditions.throttled else ("throttling", "none", "ok")


def compute_flag(report: Report) -> tuple[str, str, str]:
    check = _extra(report.conversion, "compute_check")
    if not isinstance(check, dict) or not check.get("verdict"):
        return "compute check", "not recorded", "warn"
    verdict = str(check["verdict"])
    ratio = check.get("ratio")
    text = verdict + (f" (artifact/model FLOPs {ratio:.2f})" if isinstance(ratio, (int, float)) else "")
    return "compute check", text, {"ok": "ok", "unmeasured": "warn"}.get(verdict, "bad")


def trust_flags(report: Report) -> list[tuple[str, str, str]]:
    if not report.valid:
        return [("valid", "no: the numbers below are not a measurement", "bad")]
    return [validation_flag(report), *stability_flags(report), throttling_flag(report), compute_flag(report)]
