"""A model as every runtime's export sees it, built in the conversion worker from its spec.

`prepare()` imports the model's source, instantiates it with its seed, re-draws the weights that
would let the converter fold work away (dense_weights.py), counts its parameters, builds the task's
check inputs (two seeded samples), takes PyTorch's reference outputs for them, notes any call of
the eager forward that draws random numbers (and for a model that samples, its spread over repeated
runs and its outputs with the draws at their mean: stochastic.py) and counts its multiply-accumulate work. The runtime
then exports `Prepared.target` (the model behind a channels-last image input and a flat tuple of
outputs) and validates its artifact against `Prepared.references`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import Any

from nnlite_tui.core.convert.causes import SAMPLES
from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.record import ConversionRecord
from nnlite_tui.core.convert.worker.dense_weights import WeightsRecord, apply_policy
from nnlite_tui.core.convert.worker.errors import SamplesAtInference, StageError, first_line
from nnlite_tui.core.convert.worker.flop_count import ModelWork, count_model_work
from nnlite_tui.core.convert.worker.random_weights import Requested, random_instead_of_downloads
from nnlite_tui.core.convert.worker.sampling import drawing_calls
from nnlite_tui.core.convert.worker.stochastic import Sampled, sampled
from nnlite_tui.core.convert.worker.token_ranges import ranged_checks
from nnlite_tui.core.sources import lemur_package, task_inputs
from nnlite_tui.core.sources.task_inputs import TaskInputs
from nnlite_tui.core.spec import ModelSpec


class Filtered(Exception):
    """The model is outside the user's filters (e.g. --max-params); not an error of the model."""


def load_module(spec: ModelSpec):
    if spec.file:
        # Named by content and unit, not by Python's per-process hash: the converters write module
        # names into the artifact, so the same model converts to the same bytes in every worker.
        unit = hashlib.sha256(spec.name.encode()).hexdigest()[:8]
        mod_name = f"nnlite_model_{spec.sha256[:12]}_{unit}"
        ispec = importlib.util.spec_from_file_location(mod_name, spec.file)
        if ispec is None or ispec.loader is None:
            raise ImportError(f"cannot load {spec.file}")
        module = importlib.util.module_from_spec(ispec)
        sys.modules[mod_name] = module
        root = lemur_package.checkout_root(spec.file)
        if root is not None and str(root) not in sys.path:
            sys.path.append(str(root))  # the checkout's own `ab`, after anything installed
        try:
            ispec.loader.exec_module(module)
        except ModuleNotFoundError as exc:
            if root is None and lemur_package.is_lemur_package(exc.name):
                raise ModuleNotFoundError(lemur_package.MISSING.format(name=exc.name), name=exc.name) from exc
            raise
        return module
    if spec.module is None:
        raise ImportError(f"{spec.name}: neither a file nor a module to import")
    return importlib.import_module(spec.module)


@dataclass(frozen=True)
class Built:
    """A constructed model, its example input, and the pretrained checkpoints it asked for and did not get."""

    model: Any
    example: Any
    not_downloaded: tuple[str, ...] = ()  # URLs; the modules that asked kept their random initialisation


def construct(spec: ModelSpec, strict_weights: bool = False) -> Built:
    """Import and instantiate a spec's model in eval mode, raising StageError('import'|'instantiate').

    A checkpoint requested at construction that would need a download is not fetched (the worker is
    offline): the architecture keeps its random initialisation and the URL is recorded
    (random_weights.py). `strict_weights`: such a request fails the construction instead."""
    import torch

    try:
        module = load_module(spec)
    except BaseException as exc:  # SyntaxError, ImportError, anything the module body raises
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("import", exc) from exc
    # strict: the offline guard's refusal fails the construction ("downloads weights at construction")
    intercept = contextlib.nullcontext(Requested()) if strict_weights else random_instead_of_downloads()
    try:
        torch.manual_seed(0)
        with intercept as requested:
            if spec.kind == "factory":
                if spec.factory is None:
                    raise TypeError(f"{spec.name}: a factory model without its factory's name")
                model, example = getattr(module, spec.factory)()
            else:
                model = module.Net(tuple(spec.in_shape), tuple(spec.out_shape), dict(spec.prm), torch.device("cpu"))
                example = torch.randn(*spec.in_shape, generator=torch.Generator().manual_seed(0))
        model = model.eval()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("instantiate", exc) from exc
    return Built(model, example, tuple(dict.fromkeys(requested.urls)))


def build_model(spec: ModelSpec, strict_weights: bool = False):
    """(model, example_input NCHW) for a spec: construct() without the record."""
    built = construct(spec, strict_weights)
    return built.model, built.example


def flat_outputs(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flat_outputs(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flat_outputs(v)]
    return []


def as_exported(model, image_index: int | None):
    """The model as exported: NHWC image input (phones' camera layout) and a flat tuple of outputs."""
    import torch

    class AsExported(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            if image_index is not None:
                # contiguous(): models that .view() their activations need NCHW strides, as in eager mode
                args = list(args)
                args[image_index] = args[image_index].permute(0, 3, 1, 2).contiguous()
            out = self.inner(*args)
            return out if isinstance(out, torch.Tensor) else tuple(flat_outputs(out))

    # The converters name every tensor after the module path that made it, starting with this
    # class's qualified name: a short one keeps that prefix small in every artifact.
    AsExported.__module__, AsExported.__qualname__ = "nnlite", "AsExported"
    return AsExported(model).eval()


def guarded(stage: str, fn, *args, **kwargs):
    """Run fn; any exception it raises becomes a StageError of `stage`."""
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, StageError, Filtered)):
            raise
        raise StageError(stage, exc) from exc


def _same(a, b) -> bool:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        # equal_nan: a model whose output is NaN (saturated random weights) is not sampling
        return bool(torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))
    return torch.equal(a, b)


def blame_sampling(ops: list[str], fn, *args):
    """Run fn; if it fails and the model drew random numbers, that is the reason (a draw that did
    not change these two runs can still make the graph data-dependent, e.g. `if torch.rand(1) < p`).
    `ops`: the calls that really drew (sampling.drawing_calls), never ops merely tagged as seeded."""
    try:
        return fn(*args)
    except StageError as err:
        if not ops or isinstance(err.exc, SamplesAtInference):  # no draw, or the reason is already said
            raise
        why = SamplesAtInference(f"{SAMPLES} ({ops[0]}); a converted model cannot reproduce PyTorch's random "
                                 f"draws ({err.stage}: {first_line(str(err.exc))[:200]})")
        raise StageError(err.stage, why) from err.exc


def references(model, checks: list[TaskInputs]) -> tuple[list[list], bool]:
    """PyTorch's outputs for each check, and whether a second run on the first input differs (the
    model samples: stochastic.py converts and validates it as such)."""
    import torch

    with torch.no_grad():
        refs = [flat_outputs(model(*c.args)) for c in checks]
        torch.manual_seed(12345)  # a sampling model now draws other numbers than in the first run
        again = flat_outputs(model(*checks[0].args))
    return refs, any(not _same(a, b) for a, b in zip(refs[0], again))


def _sampling(model, checks: list[TaskInputs], found: list[str], varies: bool) -> Sampled | None:
    """The sampling record of a model that draws (None for one that does not); a model whose runs
    differ without a torch draw (numpy's or Python's random) fails: its export would freeze the draw."""
    if not found and not varies:
        return None
    if not found:
        raise SamplesAtInference(f"{SAMPLES}: two runs on the same input differ and no torch op drew, so the "
                                 "draw is outside torch (numpy, random) and an export would freeze it; draw with "
                                 "torch.rand/randn in forward")
    return sampled(model, checks, found, varies, flat_outputs)


@dataclass
class Prepared:
    """A built model with its check inputs and PyTorch's answers, ready for a runtime's export."""

    spec: ModelSpec
    model: Any  # the eval-mode torch module
    checks: list[TaskInputs]
    references: list[list]  # for a model whose outputs vary: PyTorch's with every draw at its mean
    sampling: list[str]  # calls of the eager forward that drew random numbers (see blame_sampling)
    image_index: int | None  # the input fed channels-last, if any
    params: int
    weights: WeightsRecord  # what the weights policy re-drew (or would have)
    work: ModelWork | None = None  # PyTorch's multiply-accumulate work, for the compute check
    work_unmeasured: str | None = None  # why `work` could not be counted
    not_downloaded: tuple[str, ...] = ()  # checkpoints asked for at construction, not loaded (random weights)
    sampled: Sampled | None = None  # a model that draws: its record (stochastic.py)

    @property
    def target(self):
        """The module a runtime exports: NHWC image input, flat tuple of outputs."""
        return as_exported(self.model, self.image_index)

    def fed(self, check: TaskInputs) -> tuple:
        """A check's inputs as the artifact takes them (the image channels-last)."""
        if self.image_index is None:
            return check.args
        return tuple(a.permute(0, 2, 3, 1).contiguous() if i == self.image_index else a
                     for i, a in enumerate(check.args))

    def common_fields(self) -> ConversionRecord:
        """The result fields every runtime reports the same way."""
        first = self.checks[0]
        return {"params": self.params, "layout": "NHWC" if self.image_index is not None else "as-is",
                "input_shape": [int(d) for d in first.args[0].shape], "task": first.task,
                "input_signature": first.signature(nhwc=self.image_index is not None),
                "weights": {**self.weights.to_dict(),
                            **({"not_downloaded": list(self.not_downloaded)} if self.not_downloaded else {})},
                "model_flops": self.work.flops if self.work is not None else None}


def _count_work(model, args: tuple) -> tuple[ModelWork | None, str | None]:
    """PyTorch's MAC work, or why it could not be counted (the check is then unmeasured, not zero)."""
    try:
        return count_model_work(model, args), None
    except Exception as exc:  # noqa: BLE001  any failure of the counting forward: recorded, the check absent
        return None, f"{type(exc).__name__}: {first_line(str(exc))[:200]}"


def prepare(spec: ModelSpec, nhwc: bool, max_params: int | None, clock: PhaseClock,
            weights: str = "dense", strict_weights: bool = False, shape=None) -> Prepared:
    """Build the model and its checks; StageError for the model's own failures, Filtered for --max-params.
    `weights`: "dense" re-draws all-zero and duplicated weights before anything runs (dense_weights.py);
    `strict_weights`: a checkpoint requested at construction fails it instead of leaving random weights;
    `shape(model)` gives the module to convert instead (detection_cut: the backbone+head part)."""
    import torch

    with clock.phase("build"):
        built = construct(spec, strict_weights)
        model, example = built.model, built.example
        weights_record = apply_policy(model, weights)  # the whole model's weights: a cut keeps them
        if shape is not None:
            model = guarded("instantiate", shape, model)
    params = int(sum(p.numel() for p in model.parameters()))
    if max_params is not None and params > max_params:
        raise Filtered(f"{params} parameters, over --max-params {max_params}")
    if spec.kind == "factory":
        args = example if isinstance(example, tuple) else (example,)
        image = 0 if len(args) == 1 and args[0].dim() == 4 and args[0].is_floating_point() else None
        first = TaskInputs(task_inputs.task_of(spec), args, tuple(f"args_{i}" for i in range(len(args))), image)
        checks = [first]
        if image is not None:  # a second input: see the validation's strength
            other = torch.randn(args[0].shape, generator=torch.Generator().manual_seed(1), dtype=args[0].dtype)
            checks.append(TaskInputs(first.task, (other,), first.names, image))
    else:
        checks = [task_inputs.build(spec, model, seed) for seed in (0, 1)]
    with clock.phase("reference"):  # PyTorch's outputs for the check, its draws and its work
        checks = ranged_checks(spec, model, checks)  # integer inputs inside the tables they index
        refs, varies = guarded("export", references, model, checks)
        sampling = [str(d) for d in drawing_calls(model, checks[0].args)]
        record = guarded("export", _sampling, model, checks, sampling, varies)
        if record is not None and record.varies:
            refs = record.at_mean if record.at_mean is not None else refs  # the deterministic part's
        work, unmeasured = _count_work(model, checks[0].args)
    first = checks[0]
    image_index = first.image_index if nhwc and first.args[first.image_index or 0].dim() == 4 else None
    return Prepared(spec, model, checks, refs, sampling, image_index, params, weights_record, work, unmeasured,
                    built.not_downloaded, record)
