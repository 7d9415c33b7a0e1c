"""The inputs a derived precision is calibrated and judged on, whatever the runtime (conversion worker).

Accuracy is measured on fixed seeded inputs: the model's example (the fp32 validation's seed 0), then
standard-normal seeds 1.. of its shape, so that every variant of a model, in every runtime, is judged
on the same inputs. Full int8 is calibrated on synthetic standard-normal inputs (seed 10000) or on the
user's .npy/.npz arrays.
"""

from __future__ import annotations

from pathlib import Path

# Inputs the accuracy is measured on: the fp32 validation's two (seeds 0 and 1), then seeds 2...
ACCURACY_SAMPLES = 16
CALIBRATION_SEED = 10_000


def accuracy_inputs(example_args: tuple) -> list[tuple]:
    """The fixed inputs: the model's example (seed 0), then standard-normal seeds 1.. of its shape."""
    import torch

    args = [example_args]
    if len(example_args) == 1 and example_args[0].is_floating_point():
        first = example_args[0]
        args += [(torch.randn(first.shape, generator=torch.Generator().manual_seed(seed), dtype=first.dtype),)
                 for seed in range(1, ACCURACY_SAMPLES)]
    return args


def calibration_samples(shape: tuple[int, ...], count: int, directory: str | None) -> tuple[list, dict[str, object]]:
    """NCHW (model-shaped) float32 samples to calibrate on, and how they were chosen (for the report)."""
    import numpy as np

    if not directory:
        rng = np.random.default_rng(CALIBRATION_SEED)
        samples = [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]
        return samples, {"source": "synthetic", "samples": count, "distribution": "standard normal",
                         "seed": CALIBRATION_SEED, "shape": list(shape)}
    files = sorted(p for p in Path(directory).iterdir() if p.suffix in (".npy", ".npz"))
    samples = []
    for path in files:
        try:
            loaded = np.load(path)
            arrays = [loaded[k] for k in loaded.files] if path.suffix == ".npz" else [loaded]
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a readable numpy array ({exc})") from exc
        for array in arrays:
            array = np.asarray(array, dtype=np.float32)
            if tuple(array.shape) == tuple(shape):
                samples.append(array)
            elif array.ndim == len(shape) and tuple(array.shape[1:]) == tuple(shape[1:]) and shape[0] == 1:
                samples.extend(array[i:i + 1] for i in range(array.shape[0]))
            else:
                raise ValueError(f"{path}: array of shape {list(array.shape)}; the model takes {list(shape)} "
                                 f"(or N x {list(shape[1:])})")
    if not samples:
        raise ValueError(f"{directory}: no .npy/.npz arrays to calibrate on")
    return samples, {"source": "directory", "samples": len(samples), "directory": str(directory),
                     "files": [p.name for p in files], "shape": list(shape)}
