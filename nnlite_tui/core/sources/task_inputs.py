"""The example inputs a model's task needs, and the task-specific reason when its graph cannot export.

LEMUR tasks (the first part of a stat directory name): image tasks take one NCHW image; captioning
takes the image and caption token ids (teacher forcing, as in training); text generation takes token
ids; text-to-image takes token ids and, when forward asks for it, a noise vector. Runs in the worker.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TypedDict

CAPTIONING, TEXT_GENERATION = "img-captioning", "txt-generation"
TEXT_TO_IMAGE = ("txt-image", "text-to-image")
DEFAULT_VOCAB = 10000
CAPTION_TOKENS = 16  # caption length fed with the image (LEMUR's COCO captions are 10-20 tokens)
TEXT_TOKENS = 32
DEFAULT_LATENT = 100
_IMAGE_NAMES = frozenset({"image", "images", "img", "imgs"})
_NOISE_NAMES = ("noise", "z", "latent", "latents", "eps")


class InputSignature(TypedDict, total=False):
    """One input as the conversion records it: its name, shape and dtype, and for an integer input the
    valid values (convert/worker/token_ranges.TokenRange.to_dict)."""

    name: str
    shape: list[int]
    dtype: str
    range: list[int]  # [low, high)
    range_from: str


@dataclass(frozen=True)
class TaskInputs:
    task: str
    args: tuple  # torch tensors, in forward's order
    names: tuple[str, ...]
    image_index: int | None  # the NCHW image among args (fed NHWC when asked), if any
    # Per arg: the valid values of an integer input (convert/worker/token_ranges.TokenRange), else None
    ranges: tuple = ()

    def signature(self, nhwc: bool = False) -> list[InputSignature]:
        out: list[InputSignature] = []
        for i, (name, t) in enumerate(zip(self.names, self.args)):
            shape = list(t.shape)
            if nhwc and i == self.image_index:
                shape = [shape[0], *shape[2:], shape[1]]
            entry: InputSignature = {"name": name, "shape": [int(d) for d in shape], "dtype": str(t.dtype).replace("torch.", "")}
            valid = self.ranges[i] if i < len(self.ranges) else None
            out.append({**entry, **valid.to_dict()} if valid is not None else entry)
        return out


def task_of(spec) -> str:
    return spec.task or "img-classification"


def vocab_size(spec) -> int:
    """From prm (vocab_size / vocab) when recorded, else out_shape[0], as LEMUR's loaders pass it
    (text-to-image's out_shape is the image: its vocabulary is only ever in prm)."""
    for key in ("vocab_size", "vocab", "n_vocab"):
        value = spec.prm.get(key)
        if isinstance(value, int) and value > 1:
            return value
    if spec.task in TEXT_TO_IMAGE or not spec.out_shape or int(spec.out_shape[0]) <= 1:
        return DEFAULT_VOCAB
    return int(spec.out_shape[0])


def _tokens(torch, vocab: int, length: int, seed: int):
    # ids >= 4 so that no special token (pad/sos/eos/unk) changes a model's control flow
    low = 4 if vocab > 8 else 0
    return torch.randint(low, vocab, (1, length), generator=torch.Generator().manual_seed(seed))


def _image(torch, spec, seed: int):
    return torch.randn(*spec.in_shape, generator=torch.Generator().manual_seed(seed))


def build(spec, model, seed: int = 0, vocab: int | None = None) -> TaskInputs:
    """Inputs for spec's task; `seed` varies the values, never the shapes or dtypes. `vocab`: the token
    ids' bound when the model's own embedding says it (convert/worker/token_ranges), else the task's."""
    import torch

    task = task_of(spec)
    vocab = vocab or vocab_size(spec)
    if task == CAPTIONING:
        tokens = _tokens(torch, vocab, CAPTION_TOKENS, seed + 100)
        return TaskInputs(task, (_image(torch, spec, seed), tokens), ("images", "captions"), 0)
    if task == TEXT_GENERATION:
        length = int(spec.in_shape[-1]) if len(spec.in_shape) == 2 else TEXT_TOKENS
        return TaskInputs(task, (_tokens(torch, vocab, length, seed + 100),), ("tokens",), None)
    if task in TEXT_TO_IMAGE:
        return _text_to_image(torch, spec, model, seed, vocab)
    return TaskInputs(task, (_image(torch, spec, seed),), ("images",), 0)


def _text_to_image(torch, spec, model, seed: int, vocab: int) -> TaskInputs:
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        params = []
    args, names = [], []
    for p in params or [inspect.Parameter("tokens", inspect.Parameter.POSITIONAL_ONLY)]:
        if p.name.lower() in _IMAGE_NAMES:  # an image to condition on (or to encode, as a VAE's forward)
            args.append(_image(torch, spec, seed))
        elif p.name.lower() in _NOISE_NAMES:
            latent = spec.prm.get("latent_dim") or spec.prm.get("noise_dim") or DEFAULT_LATENT
            args.append(torch.randn(1, int(latent), generator=torch.Generator().manual_seed(seed + 200)))
        else:
            args.append(_tokens(torch, vocab, TEXT_TOKENS, seed + 100))
        names.append(p.name)
    image = next((i for i, n in enumerate(names) if n.lower() in _IMAGE_NAMES), None)  # channels-last, as any
    return TaskInputs(spec.task, tuple(args), tuple(names), image)


def export_reason(task: str, cause: str) -> str | None:
    """Why a task's model cannot be exported as one graph, for a data-dependent / input failure."""
    if task in TEXT_TO_IMAGE and cause.endswith("-error"):
        cause = "unsupported-input"  # its forward rejected token ids / noise: it wants something else
    if cause not in ("data-dependent", "unsupported-input"):
        return None
    if task == "obj-detection":
        return ("obj-detection: the eval-mode output (score filtering, NMS, a variable number of boxes) "
                "depends on the data, so it is not one static graph; export the detection head without "
                "post-processing")
    if task == CAPTIONING:
        return ("img-captioning: forward(images, captions) takes a data-dependent path (a generation loop "
                "or token-dependent control flow), so it is not one static graph")
    if task == TEXT_GENERATION:
        return "txt-generation: forward(tokens) takes a data-dependent path (a sampling or decoding loop)"
    if task in TEXT_TO_IMAGE:
        return ("text-to-image: forward does not take token ids / noise tensors (text prompts as strings or a "
                "tokenizer inside the model), which an exported graph cannot take")
    if task == "img-classification" and cause == "data-dependent":
        return ("img-classification: the output depends on the data through control flow "
                "(e.g. mixture-of-experts routing that picks experts by value)")
    return None
