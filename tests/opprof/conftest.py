"""A small convolutional model converted once per session with the real converter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def small_cnn(tmp_path_factory) -> Path:
    os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")
    import litert_torch
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).eval()
    path = tmp_path_factory.mktemp("profile") / "small_cnn.tflite"
    litert_torch.convert(model, (torch.randn(1, 3, 32, 32),)).export(str(path))
    return path
