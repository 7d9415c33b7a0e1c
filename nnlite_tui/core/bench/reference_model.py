"""The reference model every device times at intervals during a run, so that its drift is on record.

A small fixed convolutional network (about 21 MFLOP at 1x3x32x32): long enough per inference for
any clock, short enough that timing it costs a fraction of a second. Its converted file ships in the
package (reference.tflite, made by bench/make_reference.py from `make()`), so every device and every
run times the same bytes; reference.py names its sha256.
"""

from __future__ import annotations


def make():
    """(model, example input): the reference network with seeded weights, as a `file.py:factory`."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    ).eval()
    return model, torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
