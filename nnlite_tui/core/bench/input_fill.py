"""The seeded input every benchmark feeds a model, on the host, the simulator and the app alike."""

from __future__ import annotations


def make_input(shape, dtype, seed: int, quantization=None, value_range=None):
    """The seeded input for one tensor. A quantized integer tensor (`quantization` = the detail's
    (scale, zero_point) with scale > 0) gets the same standard-normal sample a float tensor gets,
    quantized with its scale and zero point; an unquantized integer tensor (ids, masks) gets small
    random integers, never negative: they index embeddings as token ids, and ExecuTorch's embedding
    kernel fails the run on a negative id where LiteRT's gather reads on (the same fill for every runtime
    and the app, android-app/PROTOCOL.md section 4). `value_range` = (low, high) that the conversion
    recorded for an integer input (token ids inside their embedding table: input_ranges) makes its fill
    uniform in [low, high) instead."""
    import numpy as np

    from nnlite_tui.core.bench.tensor_quant import quantize

    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(size=tuple(shape)).astype(dtype)
    if quantization is not None and float(quantization[0]) > 0.0:
        sample = rng.standard_normal(size=tuple(shape))
        return quantize(sample, dtype, float(quantization[0]), int(quantization[1]))
    info = np.iinfo(dtype)
    if value_range is not None:
        low, high = max(int(value_range[0]), int(info.min)), min(int(value_range[1]), int(info.max) + 1)
        return rng.integers(low, high, size=tuple(shape), dtype=dtype)
    return rng.integers(max(info.min, 0), min(info.max, 127), size=tuple(shape), dtype=dtype)
