"""Exact rewrites of ops the LiteRT lowering lacks, applied only while a model is exported.

- adaptive_max_pool2d whose output size divides the input size is max_pool2d with
  kernel = stride = input / output (the same windows, so the same maxima);
- bilinear (nn.Bilinear; lowers to aten._trilinear) is y = x1 . W . x2 + b, written as a matmul.

Both are equal by definition; the worker still compares the .tflite against PyTorch eager, which runs
the original ops. Anything else (e.g. adaptive pooling with overlapping windows) keeps the original op
and fails in the lowering as before.
"""

from __future__ import annotations

import contextlib


def _pair(v, like):
    if v is None:
        return like
    return (v, v) if isinstance(v, int) else tuple(like_i if o is None else o for o, like_i in zip(v, like))


@contextlib.contextmanager
def exact_rewrites():
    import torch.nn.functional as F

    original_amp, original_bilinear = F.adaptive_max_pool2d, F.bilinear

    def adaptive_max_pool2d(input, output_size, return_indices=False):
        hw = tuple(int(d) for d in input.shape[-2:])
        out = _pair(output_size, hw)
        if not return_indices and all(o > 0 and h % o == 0 for h, o in zip(hw, out)):
            kernel = tuple(h // o for h, o in zip(hw, out))
            return F.max_pool2d(input, kernel, kernel)
        return original_amp(input, output_size, return_indices)

    def bilinear(input1, input2, weight, bias=None):
        # y[.., o] = sum_ij x1[.., i] W[o, i, j] x2[.., j], as one matmul and a product-sum
        # (the converter's einsum lowering gave wrong values for this contraction).
        o, i, j = weight.shape
        lead = input1.shape[:-1]
        a = input1.reshape(-1, i) @ weight.permute(1, 0, 2).reshape(i, o * j)
        y = (a.reshape(-1, o, j) * input2.reshape(-1, 1, j)).sum(-1).reshape(*lead, o)
        return y if bias is None else y + bias

    F.adaptive_max_pool2d, F.bilinear = adaptive_max_pool2d, bilinear
    try:
        yield
    finally:
        F.adaptive_max_pool2d, F.bilinear = original_amp, original_bilinear
