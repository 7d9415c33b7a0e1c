"""A model that samples at inference, converted with its sampling and validated by what can be checked.

Which models: eager runs on one input that differ (`varies`: two in model.references, then RUNS
here), or draws that do not change the output but stop the export (`if torch.rand(1) < p: ...` with equal branches). The export then tries,
in order (`attempts`), the program as traced, its draws written with rand/randn (draws.as_rand_randn,
which both runtimes run: the artifact samples on the device), and its draws at their expected values
(draws.at_mean: the artifact draws nothing, e.g. when a draw decides control flow).

How the artifact is validated (`validation`):
- outputs that vary: their distribution over RUNS runs on the first check input against PyTorch's
  over as many (distribution.py), and the deterministic part: the model with every draw at its mean,
  converted as a second artifact and compared with PyTorch eager under the same replacement
  (fixed_draws.py) on every check at the usual tolerance (its max_abs_diff is the result's);
- outputs that do not vary: compared with PyTorch's on every check as any model's are.
The result's `validation.method` says which ("distribution" or "exact") and `validation.sampling`
holds the draws, whether the artifact draws, and the figures.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nnlite_tui.core.convert.causes import SAMPLES
from nnlite_tui.core.convert.record import AtMean, SamplingRecord
from nnlite_tui.core.convert.worker import draws
from nnlite_tui.core.convert.worker.distribution import RUNS, DistributionMismatch, Spread
from nnlite_tui.core.convert.worker.errors import SamplesAtInference, StageError, first_line
from nnlite_tui.core.convert.worker.fixed_draws import NoMean, outputs_at_mean
from nnlite_tui.core.convert.worker.validation import VALIDATE_RTOL

AS_TRACED, DRAWING, AT_MEAN = "as-traced", "rand-randn", "at-mean"


@dataclass
class Sampled:
    """What the worker knows of a model's sampling, from PyTorch eager before any export."""

    draws: list[str]  # the calls that drew (sampling.drawing_calls)
    varies: bool  # two runs on one input differ
    spread: Spread | None = None  # PyTorch's outputs over RUNS runs on the first check (when it varies)
    at_mean: list[list] | None = None  # PyTorch's outputs on each check with every draw at its mean
    at_mean_unchecked: str | None = None  # why there is no at_mean

    def attempts(self) -> list[str]:
        """The exports to try, in order (the first that converts is the artifact)."""
        return [DRAWING, AT_MEAN] if self.varies else [AS_TRACED, DRAWING, AT_MEAN]


def sampled(model, checks: list, found: list[str], varies: bool, flatten, runs: int = RUNS) -> Sampled:
    """PyTorch's side of the checks: its spread over `runs` seeded runs on the first check and, when
    the outputs vary, its outputs at the mean. Two runs that agree do not show that a model's draws
    never change its output (a coin flip agrees with itself half the time): the runs here decide."""
    import numpy as np
    import torch

    spread = Spread()
    with torch.no_grad():
        for seed in range(runs):
            torch.manual_seed(1000 + seed)
            spread.add([t.detach().numpy() for t in flatten(model(*checks[0].args))])
    varies = varies or any(bool(np.any(s > 0)) for s in spread.squares)
    record = Sampled(found, varies)
    if not varies:
        return record
    record.spread = spread
    try:
        record.at_mean = outputs_at_mean(model, checks, flatten)
    except NoMean as exc:
        record.at_mean_unchecked = str(exc)
    return record


def table(attempt: str) -> draws.Table | None:
    """How the exported program's draws are rewritten for an attempt (None: left as traced)."""
    return {AS_TRACED: None, DRAWING: draws.as_rand_randn(), AT_MEAN: draws.at_mean()}[attempt]


def while_tracing(attempt: str) -> contextlib.AbstractContextManager:
    """What the trace of an attempt runs under: the at-mean attempt fixes draws before they can
    decide control flow (draws.factories_at_mean)."""
    return draws.factories_at_mean() if attempt == AT_MEAN else contextlib.nullcontext()


def unconvertible(record: Sampled, stage: str, first_error: str) -> str:
    """The failure's reason when no attempt converted: what the user can change."""
    return (f"{SAMPLES} ({record.draws[0] if record.draws else 'a draw outside torch'}) and neither its draws nor "
            f"their mean convert ({stage}: {first_error[:200]}); draw with torch.rand/randn/bernoulli/normal in "
            "tensor code (torch.where(torch.rand(...) < p, a, b) rather than `if torch.rand(1) < p`)")


def never_drawing_artifact(record: Sampled) -> str:
    """The failure's reason when only the at-mean export converted and the outputs vary."""
    return (f"{SAMPLES} ({record.draws[0] if record.draws else 'a draw outside torch'}): its draws convert only "
            "at their mean, and that artifact's output is not distributed as PyTorch's; branch in tensor "
            "code (torch.where(torch.rand(...) < p, a, b) rather than `if torch.rand(1) < p`)")


def validation(record: Sampled, attempt: str, checked: Mapping[str, Any], figures: dict[str, object] | None,
               at_mean: AtMean | None) -> dict[str, object]:
    """The result's fields for a sampling model: `checked` is check_outputs' answer (the at-mean
    artifact's against PyTorch at the mean when the outputs vary, else the artifact's against
    PyTorch's), `figures` the distribution check's, `at_mean` {max_abs_diff, tolerance} or None."""
    block: dict[str, object] = dict(checked.get("validation") or {})
    block["method"] = "distribution" if figures is not None else "exact"
    sampling: SamplingRecord = {"draws": record.draws[:20], "artifact_draws": attempt != AT_MEAN, "export": attempt}
    if figures is not None:
        sampling["distribution"] = figures
        sampling["at_mean"] = at_mean if at_mean is not None else {"unchecked": record.at_mean_unchecked or "not run"}
    block["sampling"] = sampling
    return {**checked, "validation": block}


def validate_artifact(record: Sampled, attempt: str, path: str, references: list[list],
                      exact: Callable[[str, list[list]], Mapping[str, Any]],
                      spread: Callable[[str, Spread], Mapping[str, Any]],
                      convert_at_mean: Callable[[str], None]) -> dict[str, object]:
    """The artifact of a model that draws, validated as the module says, through a runtime's own
    `exact(path, references)` (its validate), `spread(path, reference)` (its validate_spread, with
    the distribution figures under "figures") and `convert_at_mean(path)` (the at-mean artifact)."""
    if not record.varies:  # the outputs do not vary: compared as any model's
        return validation(record, attempt, exact(path, references), None, None)
    assert record.spread is not None
    try:
        described = dict(spread(path, record.spread))
    except DistributionMismatch as exc:
        if attempt == AT_MEAN:
            raise SamplesAtInference(f"{never_drawing_artifact(record)} ({exc})") from exc
        raise
    figures = described.pop("figures")
    checked: Mapping[str, object] = {"max_abs_diff": None,
                                     "validation": {"inputs": 1, "strength": "distribution only",
                                                    "input_sensitivity": None}}
    at_mean: AtMean = {"unchecked": record.at_mean_unchecked or "not run"}
    if record.at_mean is not None:
        mean_path = path if attempt == AT_MEAN else path + ".at-mean"
        try:
            if mean_path != path:
                convert_at_mean(mean_path)
            result = exact(mean_path, record.at_mean)  # a mismatch here is the conversion's: it fails
            checked = {k: v for k, v in result.items() if k in ("max_abs_diff", "validation")}
            at_mean = {"max_abs_diff": result["max_abs_diff"], "tolerance": VALIDATE_RTOL}
        except StageError as err:  # the variant itself does not convert: the distribution stands alone
            at_mean = {"unchecked": f"the model with its draws at their mean does not convert ({err.stage}: "
                                    f"{first_line(str(err.exc))[:300]})"}
        finally:
            if mean_path != path and os.path.exists(mean_path):
                os.remove(mean_path)
    return {**validation(record, attempt, checked, figures, at_mean), **described}
