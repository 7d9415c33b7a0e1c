"""An up-front estimate of the memory a conversion needs for an input shape the user gave, against the
conversion worker's memory cap: a shape that cannot fit is refused at once, not after three timeouts.

The estimate is a floor, not a prediction (the model is not built here, discovery never imports torch):
a convolutional network's first stage keeps at least FIRST_STAGE_CHANNELS channels at the input's
height and width, and an eager forward, its export trace and the validation each hold at least
LIVE_TENSORS such activations at once, in float32, on top of the worker's own imports.
"""

from __future__ import annotations

from collections.abc import Sequence

FIRST_STAGE_CHANNELS = 16
LIVE_TENSORS = 3
BYTES_PER_VALUE = 4  # float32
WORKER_BASE_MB = 600  # torch + the converter, imported, before any model


def needed_mb(in_shape: Sequence[int]) -> float:
    """The floor above, in MB, for an input B,C,H,W."""
    batch, channels, height, width = (int(d) for d in in_shape)
    per_activation = batch * max(channels, FIRST_STAGE_CHANNELS) * height * width * BYTES_PER_VALUE
    return WORKER_BASE_MB + LIVE_TENSORS * per_activation / 2**20


def over_cap(in_shape: Sequence[int], cap_mb: int) -> str | None:
    """Why `in_shape` cannot be converted within `cap_mb`, or None."""
    need = needed_mb(in_shape)
    if need <= cap_mb:
        return None
    shape = ",".join(str(d) for d in in_shape)
    return (f"--in-shape {shape}: a conversion at this size needs at least {need / 1024:.1f} GB "
            f"({LIVE_TENSORS} activations of {FIRST_STAGE_CHANNELS} channels at {in_shape[2]}x{in_shape[3]}, "
            f"float32, plus the worker), over the conversion memory cap of {cap_mb / 1024:.1f} GB; give a smaller "
            f"shape, or raise the cap with --mem-cap-mb")
