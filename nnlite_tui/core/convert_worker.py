"""The conversion worker: runs in its own process, imports torch and litert_torch once, converts many.

The orchestrator (convert.py) talks to it over a multiprocessing Pipe: it sends job dicts and gets
result dicts. The model's own prints and the converter's logs go to a per-job log file (fd 1 and 2
are redirected), never into the pipe. The orchestrator enforces the timeout and memory cap by
killing this process; here we only classify the errors that surface as exceptions.

Failure stages: import, instantiate, export (torch.export / tracing), lower (litert lowering, jax),
serialize (writing the flatbuffer), validate (the interpreter cannot load or run the file, or its
output disagrees with PyTorch).
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

from nnlite_tui.core.spec import ModelSpec, sha256_file

# Relative agreement required between the .tflite and PyTorch eager outputs.
VALIDATE_RTOL = 1e-3


class StageError(Exception):
    def __init__(self, stage: str, exc: BaseException):
        self.stage = stage
        self.exc = exc
        super().__init__(f"{stage}: {exc}")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:500]
    return ""


def _error_fields(stage: str, exc: BaseException) -> dict[str, Any]:
    etype = type(exc)
    name = etype.__name__ if etype.__module__ == "builtins" else f"{etype.__module__}.{etype.__name__}"
    message = _first_line(str(exc)) or etype.__name__
    if isinstance(exc, SyntaxError) and exc.filename:
        message = f"{exc.filename}:{exc.lineno}: {exc.msg}"
    return {
        "ok": False,
        "stage": stage,
        "error_type": name,
        "error_message": message,
        "traceback_tail": "".join(traceback.format_exception(exc)[-6:])[-3000:],
    }


class _PhaseTracker:
    """Tells torch.export failures from lowering failures inside one litert_torch.convert() call.

    litert_torch.convert() runs torch.export and then the lowering; the exception types overlap
    (RuntimeError in both), so we note which phase was running when it raised.
    """

    def __init__(self) -> None:
        self.phase = "export"
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
            return result

        core.export_torch_signature = tracked


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


def _nhwc_wrapper(model):
    import torch

    class ChannelsLastInput(torch.nn.Module):
        """Takes NHWC input, as phones' camera pipelines produce it, and feeds the NCHW model."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            # contiguous(): models that .view() their activations need NCHW strides, as in eager mode
            return self.inner(x.permute(0, 3, 1, 2).contiguous())

    return ChannelsLastInput(model).eval()


def _flat_outputs(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat_outputs(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _flat_outputs(v)]
    return []


def _validate(path: str, samples_nhwc: list, references: list[list]) -> dict[str, Any]:
    """Run the .tflite on each sample; every output must match PyTorch's within VALIDATE_RTOL."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=1)
    interpreter.allocate_tensors()
    inputs = interpreter.get_input_details()
    max_abs = 0.0
    scale = 1.0
    for sample, reference in zip(samples_nhwc, references):
        interpreter.set_tensor(inputs[0]["index"], sample.astype(inputs[0]["dtype"]))
        interpreter.invoke()
        outputs = [interpreter.get_tensor(o["index"]) for o in interpreter.get_output_details()]
        if len(outputs) != len(reference):
            raise ValueError(f"the .tflite has {len(outputs)} outputs, PyTorch gives {len(reference)}")
        for got, want in zip(outputs, reference):
            want = want.detach().numpy()
            if got.shape != want.shape:
                raise ValueError(f"output shape {list(got.shape)} differs from PyTorch {list(want.shape)}")
            if want.size:
                max_abs = max(max_abs, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
                scale = max(scale, float(np.max(np.abs(want))))
    if not np.isfinite(max_abs) or max_abs > VALIDATE_RTOL * scale:
        raise ValueError(f"output differs from PyTorch: max abs diff {max_abs:.3g} (tolerance {VALIDATE_RTOL * scale:.3g})")
    return {
        "max_abs_diff": max_abs,
        "tflite_input_shape": [int(d) for d in inputs[0]["shape"]],
        "tflite_input_dtype": inputs[0]["dtype"].__name__,
        "output_shapes": [[int(d) for d in o["shape"]] for o in interpreter.get_output_details()],
        "validation": _strength(references, scale),
    }


def _strength(references: list[list], scale: float) -> dict[str, Any]:
    """How much the check above can tell: nothing about the input side when the output ignores it.

    With random weights some models saturate, and their output is the same for any input; a
    .tflite that scrambled its input (a wrong layout) would then pass the comparison unseen.
    """
    if len(references) < 2:
        return {"inputs": len(references), "strength": "single-input", "input_sensitivity": None}
    pairs = zip(references[0], references[1])
    moved = max((float((a.double() - b.double()).abs().max()) for a, b in pairs if a.numel()), default=0.0)
    sensitivity = moved / scale
    return {"inputs": len(references), "input_sensitivity": sensitivity,
            "strength": "strong" if sensitivity > VALIDATE_RTOL else "weak: the output does not depend on the input"}


class Filtered(Exception):
    """The model is outside the user's filters (e.g. --max-params); not an error of the model."""


def convert_one(spec: ModelSpec, out_path: str, tracker: _PhaseTracker, nhwc: bool = True,
                max_params: int | None = None) -> dict[str, Any]:
    import litert_torch
    import torch

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    model, example = build_model(spec)
    timings["build_s"] = time.perf_counter() - t0
    example_args = example if isinstance(example, tuple) else (example,)
    params = int(sum(p.numel() for p in model.parameters()))
    if max_params is not None and params > max_params:
        raise Filtered(f"{params} parameters, over --max-params {max_params}")
    # A second input, when the model takes one float tensor: see _strength.
    checks = [example_args]
    if len(example_args) == 1 and example_args[0].is_floating_point():
        checks.append((torch.randn(example_args[0].shape, generator=torch.Generator().manual_seed(1),
                                   dtype=example_args[0].dtype),))
    with torch.no_grad():
        try:
            references = [_flat_outputs(model(*args)) for args in checks]
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise StageError("export", exc) from exc
    use_nhwc = nhwc and len(example_args) == 1 and example_args[0].dim() == 4

    def as_fed(args: tuple) -> tuple:
        return (args[0].permute(0, 2, 3, 1).contiguous(),) if use_nhwc else args

    target = _nhwc_wrapper(model) if use_nhwc else model
    sample = as_fed(example_args)
    t0 = time.perf_counter()
    tracker.phase = "export"
    try:
        edge = litert_torch.convert(target, sample)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError(tracker.phase, exc) from exc
    timings["convert_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tmp = out_path + ".part"
    try:
        edge.export(tmp)
        os.replace(tmp, out_path)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("serialize", exc) from exc
    timings["serialize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        checked = _validate(out_path, [as_fed(args)[0].numpy() for args in checks], references)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StageError("validate", exc) from exc
    timings["validate_s"] = time.perf_counter() - t0
    return {
        "ok": True,
        "stage": "done",
        "tflite_path": out_path,
        "tflite_bytes": os.path.getsize(out_path),
        "tflite_sha256": sha256_file(out_path),
        "params": params,
        "layout": "NHWC" if use_nhwc else "as-is",
        "input_shape": [int(d) for d in example_args[0].shape],
        "timings": timings,
        "converter": "litert-torch",
        "converter_version": str(litert_torch.__version__),
        "torch_version": str(torch.__version__),
        **checked,
    }


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
    t0 = time.perf_counter()
    with _redirect_fds(job.get("log_path")):
        try:
            result = convert_one(spec, job["out_path"], tracker, nhwc=job.get("nhwc", True),
                                 max_params=job.get("max_params"))
        except Filtered as exc:
            result = {"ok": False, "stage": "filtered", "error_type": "Filtered", "error_message": str(exc)}
        except StageError as err:
            print(f"[nnlite] {err.stage} failed: {_first_line(str(err.exc))}", file=sys.stderr)
            traceback.print_exception(err.exc)
            result = _error_fields(err.stage, err.exc)
        except MemoryError as exc:
            result = _error_fields("out-of-memory", exc)
    result["seconds"] = time.perf_counter() - t0
    return result


def worker_main(conn, threads: int = 1) -> None:
    """Serve jobs from the orchestrator: import once, then convert until told to stop."""
    os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    torch.set_num_threads(max(1, threads))
    import litert_torch  # noqa: F401  (the 4-6 s import, paid once per worker)

    tracker = _PhaseTracker()
    conn.send({"ready": True, "pid": os.getpid()})
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
