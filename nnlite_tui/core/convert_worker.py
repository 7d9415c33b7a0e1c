"""The conversion worker: runs in its own process, imports torch and litert_torch once, converts many.

The orchestrator (convert.py) talks to it over a multiprocessing Pipe: it sends job dicts and gets
result dicts. The model's own prints and the converter's logs go to a per-job log file (fd 1 and 2
are redirected), never into the pipe. The orchestrator enforces the timeout and memory cap by
killing this process; here we only classify the errors that surface as exceptions.

Failure stages: import, instantiate, export (torch.export / tracing), lower (litert lowering, jax),
serialize (writing the flatbuffer), validate (the interpreter cannot load or run the file, or its
output disagrees with PyTorch).

The worker converts offline (offline.py) and can import torchvision even when its compiled extension
does not load (torchvision_compat.py). Inputs follow the model's task (task_inputs.py); a result
records "task", "input_signature" and, for a failure, "cause" (failure_causes.py).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import time
import traceback
from typing import Any

from nnlite_tui.core import offline, task_inputs, torchvision_compat
from nnlite_tui.core.convert_phases import PhaseClock
from nnlite_tui.core.convert_errors import SamplesAtInference, StageError, error_fields, explained, first_line
from nnlite_tui.core.convert_validate import VALIDATE_RTOL, flat_outputs, validate
from nnlite_tui.core.export_fixes import exact_rewrites
from nnlite_tui.core.failure_causes import SAMPLES, classify
from nnlite_tui.core.spec import ModelSpec, sha256_file
from nnlite_tui.core.task_inputs import TaskInputs

__all__ = ["VALIDATE_RTOL", "build_model", "convert_one", "handle_job", "worker_main"]


class _PhaseTracker:
    """Tells torch.export failures from lowering failures inside one litert_torch.convert() call.

    litert_torch.convert() runs torch.export and then the lowering; the exception types overlap
    (RuntimeError in both), so we note which phase was running when it raised.
    """

    def __init__(self) -> None:
        self.phase = "export"
        self.switched_at: tuple[float, float] | None = None  # (wall, cpu) when the lowering began
        self.hooked = False
        try:
            from litert_torch._convert import core
        except ImportError:
            return
        original = getattr(core, "export_torch_signature", None)
        if original is None:
            return

        def tracked(*args, **kwargs):
            self.phase = "export"
            result = original(*args, **kwargs)
            self.phase = "lower"
            self.switched_at = (time.perf_counter(), time.process_time())
            return result

        core.export_torch_signature = tracked
        self.hooked = True


def _load_module(spec: ModelSpec):
    if spec.file:
        mod_name = f"nnlite_model_{spec.sha256[:12]}_{abs(hash(spec.name)) % 10**8}"
        ispec = importlib.util.spec_from_file_location(mod_name, spec.file)
        if ispec is None or ispec.loader is None:
            raise ImportError(f"cannot load {spec.file}")
        module = importlib.util.module_from_spec(ispec)
        sys.modules[mod_name] = module
        ispec.loader.exec_module(module)
        return module
    return importlib.import_module(spec.module)


def build_model(spec: ModelSpec):
    """(model, example_input NCHW) for a spec, raising StageError('import'|'instantiate')."""
    import torch

    try:
        module = _load_module(spec)
    except BaseException as exc:  # SyntaxError, ImportError, anything the module body raises
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("import", exc) from exc
    try:
        torch.manual_seed(0)
        if spec.kind == "factory":
            model, example = getattr(module, spec.factory)()
        else:
            model = module.Net(tuple(spec.in_shape), tuple(spec.out_shape), dict(spec.prm), torch.device("cpu"))
            example = torch.randn(*spec.in_shape, generator=torch.Generator().manual_seed(0))
        model = model.eval()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("instantiate", exc) from exc
    return model, example


def _wrapped(model, image_index: int | None):
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

    return AsExported(model).eval()


class Filtered(Exception):
    """The model is outside the user's filters (e.g. --max-params); not an error of the model."""


def _guarded(stage: str, fn, *args, **kwargs):
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


def _sampling_ops(model, args: tuple) -> list[str]:
    """The random-number ATen ops (tagged nondeterministic_seeded) one eager forward calls."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if torch.Tag.nondeterministic_seeded in func.tags:
                self.ops.append(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    try:
        with torch.no_grad(), Seen() as seen:
            model(*args)
    except Exception:  # noqa: BLE001  the plain forward below reports the model's own errors
        return []
    return seen.ops


def _blame_sampling(ops: list[str], fn, *args):
    """Run fn; if it fails and the model drew random numbers, that is the reason (a draw that did
    not change these two runs can still make the graph data-dependent, e.g. `if torch.rand(1) < p`)."""
    try:
        return fn(*args)
    except StageError as err:
        if not ops:
            raise
        why = SamplesAtInference(f"{SAMPLES} ({ops[0]}); a .tflite cannot reproduce PyTorch's random draws "
                                 f"({err.stage}: {first_line(str(err.exc))[:200]})")
        raise StageError(err.stage, why) from err.exc


def _references(model, checks: list[TaskInputs]) -> list[list]:
    """PyTorch's outputs for each check; a model whose two runs on one input differ samples."""
    import torch

    with torch.no_grad():
        refs = [flat_outputs(model(*c.args)) for c in checks]
        torch.manual_seed(12345)  # a sampling model now draws other numbers than in the first run
        again = flat_outputs(model(*checks[0].args))
    if any(not _same(a, b) for a, b in zip(refs[0], again)):
        raise SamplesAtInference(f"{SAMPLES}: two runs on the same input differ, so no .tflite can match it")
    return refs


def _export(litert_torch, target, sample: tuple, tracker: _PhaseTracker):
    """torch.export non-strict first, then strict (each traces different Python); lowering errors are final."""
    first = None
    for strict in (False, True):
        tracker.phase = "export"
        tracker.switched_at = None
        try:
            with exact_rewrites():
                return litert_torch.convert(target, sample, strict_export=strict), strict
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            if tracker.phase != "export":
                raise StageError(tracker.phase, exc) from exc
            first = first or exc
    raise StageError("export", first) from first


def _convert_at(spec: ModelSpec, out_path: str, tracker: _PhaseTracker, nhwc: bool,
                max_params: int | None, clock: PhaseClock) -> dict[str, Any]:
    import litert_torch
    import torch

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    with clock.phase("build"):
        model, example = build_model(spec)
    timings["build_s"] = time.perf_counter() - t0
    params = int(sum(p.numel() for p in model.parameters()))
    if max_params is not None and params > max_params:
        raise Filtered(f"{params} parameters, over --max-params {max_params}")
    if spec.kind == "factory":
        args = example if isinstance(example, tuple) else (example,)
        image = 0 if len(args) == 1 and args[0].dim() == 4 and args[0].is_floating_point() else None
        first = TaskInputs(task_inputs.task_of(spec), args, tuple(f"args_{i}" for i in range(len(args))), image)
        checks = [first]
        if image is not None:  # a second input: see convert_validate.strength
            other = torch.randn(args[0].shape, generator=torch.Generator().manual_seed(1), dtype=args[0].dtype)
            checks.append(TaskInputs(first.task, (other,), first.names, image))
    else:
        checks = [task_inputs.build(spec, model, seed) for seed in (0, 1)]
    with clock.phase("reference"):  # PyTorch's outputs for the check, and the sampling-op scan
        references = _guarded("export", _references, model, checks)
        sampling = _sampling_ops(model, checks[0].args)
    image_index = checks[0].image_index if nhwc and checks[0].args[checks[0].image_index or 0].dim() == 4 else None

    def as_fed(c: TaskInputs) -> tuple:
        if image_index is None:
            return c.args
        return tuple(a.permute(0, 2, 3, 1).contiguous() if i == image_index else a for i, a in enumerate(c.args))

    t0 = time.perf_counter()
    start = clock.now()
    try:
        edge, strict = _blame_sampling(sampling, _export, litert_torch, _wrapped(model, image_index),
                                       as_fed(checks[0]), tracker)
    finally:
        _split_convert(clock, start, tracker)
    timings["convert_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tmp = out_path + ".part"

    def write(converted) -> None:
        converted.export(tmp)
        os.replace(tmp, out_path)

    with clock.phase("serialize"):
        _guarded("serialize", write, edge)
        del edge  # the converted model in memory (as large as the file): the rest reads the file
    timings["serialize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    samples = [[a.numpy() for a in as_fed(c)] for c in checks]
    with clock.phase("validate"):
        checked = _blame_sampling(sampling, _guarded, "validate", validate, out_path, samples, references)
    timings["validate_s"] = time.perf_counter() - t0
    with clock.phase("hash"):
        digest = sha256_file(out_path)
    return {
        "ok": True,
        "stage": "done",
        "tflite_path": out_path,
        "tflite_bytes": os.path.getsize(out_path),
        "tflite_sha256": digest,
        "params": params,
        "layout": "NHWC" if image_index is not None else "as-is",
        "input_shape": [int(d) for d in checks[0].args[0].shape],
        "task": checks[0].task,
        "input_signature": checks[0].signature(nhwc=image_index is not None),
        "export_mode": "strict" if strict else "non-strict",
        "timings": timings,
        "converter": "litert-torch",
        "converter_version": str(litert_torch.__version__),
        "torch_version": str(torch.__version__),
        **checked,
    }


def _split_convert(clock: PhaseClock, start: tuple[float, float], tracker: _PhaseTracker) -> None:
    """litert_torch.convert() is torch.export then the lowering: one phase each, split where the
    tracker saw the export return (one "convert" phase when it could not hook in)."""
    switched = tracker.switched_at
    if switched is None or switched[0] < start[0]:
        clock.since("export" if tracker.hooked else "convert", start)
        return
    clock.add("export", switched[0] - start[0], switched[1] - start[1])
    clock.since("lower", switched)


def convert_one(spec: ModelSpec, out_path: str, tracker: _PhaseTracker, nhwc: bool = True,
                max_params: int | None = None, clock: PhaseClock | None = None) -> dict[str, Any]:
    """Convert at the spec's input size; on "output size too small", once more at the next recorded size."""
    clock = clock or PhaseClock()
    try:
        return _convert_at(spec, out_path, tracker, nhwc, max_params, clock)
    except StageError as err:
        too_small = classify(error_fields(err.stage, err.exc)) == "output-too-small"
        if not (too_small and spec.alt_in_shapes):
            raise
        retry = ModelSpec.from_dict({**spec.to_dict(), "in_shape": list(spec.alt_in_shapes[0]), "alt_in_shapes": []})
        note = {"from": list(spec.in_shape), "to": list(retry.in_shape), "reason": first_line(str(err.exc))}
        try:
            result = _convert_at(retry, out_path, tracker, nhwc, max_params, clock)
        except StageError as again:
            again.retried = note
            raise
        result["input_size_retry"] = note
        return result


@contextlib.contextmanager
def _redirect_fds(log_path: str | None):
    """Send fd 1/2 (the model's prints, the converter's C++ logs) to the job's log file."""
    if not log_path:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(fd)
        os.close(saved[0])
        os.close(saved[1])


def handle_job(job: dict[str, Any], tracker: _PhaseTracker) -> dict[str, Any]:
    if job.get("derive"):  # a precision derived from an fp32 .tflite (quantize_worker.py)
        from nnlite_tui.core.quantize_worker import handle_derive

        return handle_derive(job, sys.modules[__name__])  # it builds models and logs as this module does
    spec = ModelSpec.from_dict(job["spec"])
    _set_threads(job.get("threads"))
    t0 = time.perf_counter()
    clock = PhaseClock()
    with _redirect_fds(job.get("log_path")):
        try:
            result = convert_one(spec, job["out_path"], tracker, nhwc=job.get("nhwc", True),
                                 max_params=job.get("max_params"), clock=clock)
        except Filtered as exc:
            result = {"ok": False, "stage": "filtered", "error_type": "Filtered", "error_message": str(exc)}
        except StageError as err:
            print(f"[nnlite] {err.stage} failed: {first_line(str(err.exc))}", file=sys.stderr)
            traceback.print_exception(err.exc)
            result = explained(err, spec)
        except MemoryError as exc:
            result = error_fields("out-of-memory", exc)
    result["seconds"] = time.perf_counter() - t0
    result["phases"] = clock.to_dict()
    return result


def _set_threads(threads: int | None) -> None:
    """The job's torch intra-op threads (the pool gives the last busy worker the idle cores)."""
    if not threads:
        return
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(int(threads))


def worker_main(conn, threads: int = 1) -> None:
    """Serve jobs from the orchestrator: import once, then convert until told to stop."""
    os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    torch.set_num_threads(max(1, threads))
    # Before anything imports torchvision (a model, or a library litert_torch loads).
    torchvision_compat.prepare()
    offline.enforce()
    import litert_torch  # noqa: F401  (the 4-6 s import, paid once per worker)

    tracker = _PhaseTracker()
    # The CPU the start and imports cost, for the first job's worker_start phase.
    conn.send({"ready": True, "pid": os.getpid(), "cpu_s": time.process_time()})
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(handle_job(job, tracker))


if __name__ == "__main__":
    from multiprocessing.connection import Connection

    worker_main(Connection(int(sys.argv[1])), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
