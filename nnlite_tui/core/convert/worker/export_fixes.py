"""Exact rewrites of ops a runtime's exporter lacks or gets wrong, applied only while a model is exported
(by every runtime: LiteRT's converter lacks or mislowers all three, ExecuTorch's edge dialect has no
adaptive_max_pool2d).

- adaptive_max_pool2d: when the output size divides the input size it is max_pool2d with
  kernel = stride = input / output; otherwise it is the maximum over the same windows PyTorch uses
  (start floor(i*in/out), end ceil((i+1)*in/out)), taken rows first, then columns (a maximum over a
  rectangle is the maximum of the row maxima), with static slices;
- bilinear (nn.Bilinear; lowers to aten._trilinear) is y = x1 . W . x2 + b, written as a matmul;
- linear on an input of rank > 3 is the same linear on the input flattened to rank 2 (the converter
  emits a rank-4 batch_matmul that the LiteRT builtin rejects);
- nn.TransformerEncoder/Decoder, given a mask without an `is_causal` hint, ask whether the mask equals
  a causal one (`bool((mask == causal).all())`, torch/nn/modules/transformer.py
  `_detect_is_causal_mask`) to pick a fast path: a guard on data that stops torch.export
  (`Eq(u0, 1)`; every LEMUR captioning decoder met it). While exporting, the hint is returned as
  given (False when absent): the mask is then applied as a mask, the same values (torch's docstring:
  a False hint for a causal mask "may lead to reduced performance", never to other results).

Each is equal by definition; the worker still compares the artifact against PyTorch eager, which runs
the original ops. Anything else keeps the original op and fails in the lowering as before.
"""

from __future__ import annotations

import contextlib

# Beyond this many output rows + columns the sliced form is more graph than it is worth.
MAX_SLICED_WINDOWS = 64


def _pair(v, like):
    if v is None:
        return like
    return (v, v) if isinstance(v, int) else tuple(like_i if o is None else o for o, like_i in zip(v, like))


def _windows(size: int, out: int) -> list[tuple[int, int]]:
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _sliced_max(torch, x, out_hw):
    h, w = (int(d) for d in x.shape[-2:])
    rows = torch.stack([x[..., s:e, :].amax(-2) for s, e in _windows(h, out_hw[0])], -2)
    return torch.stack([rows[..., s:e].amax(-1) for s, e in _windows(w, out_hw[1])], -1)


def _hint_as_given(mask, is_causal=None, size=None) -> bool:
    return bool(is_causal)


@contextlib.contextmanager
def exact_rewrites():
    import torch
    import torch.nn.functional as F
    import torch.nn.modules.transformer as transformer

    originals = F.adaptive_max_pool2d, F.bilinear, F.linear
    original_amp, _, original_linear = originals

    def adaptive_max_pool2d(input, output_size, return_indices=False):
        hw = tuple(int(d) for d in input.shape[-2:])
        out = _pair(output_size, hw)
        if return_indices or not all(o > 0 for o in out):
            return original_amp(input, output_size, return_indices)
        if all(h % o == 0 for h, o in zip(hw, out)):
            kernel = tuple(h // o for h, o in zip(hw, out))
            return F.max_pool2d(input, kernel, kernel)
        if sum(out) <= MAX_SLICED_WINDOWS:
            return _sliced_max(torch, input, out)
        return original_amp(input, output_size, return_indices)

    def bilinear(input1, input2, weight, bias=None):
        # y[.., o] = sum_ij x1[.., i] W[o, i, j] x2[.., j], as one matmul and a product-sum
        # (the converter's einsum lowering gave wrong values for this contraction).
        o, i, j = weight.shape
        lead = input1.shape[:-1]
        a = input1.reshape(-1, i) @ weight.permute(1, 0, 2).reshape(i, o * j)
        y = (a.reshape(-1, o, j) * input2.reshape(-1, 1, j)).sum(-1).reshape(*lead, o)
        return y if bias is None else y + bias

    def linear(input, weight, bias=None):
        if input.dim() <= 3:
            return original_linear(input, weight, bias)
        lead = input.shape[:-1]
        return original_linear(input.reshape(-1, input.shape[-1]), weight, bias).reshape(*lead, weight.shape[0])

    detect_causal = transformer._detect_is_causal_mask
    F.adaptive_max_pool2d, F.bilinear, F.linear = adaptive_max_pool2d, bilinear, linear
    transformer._detect_is_causal_mask = _hint_as_given
    try:
        yield
    finally:
        F.adaptive_max_pool2d, F.bilinear, F.linear = originals
        transformer._detect_is_causal_mask = detect_causal
