"""Writes a large file into its temporary directory, then converts like any small model."""

import json
import os
import tempfile

import torch.nn as nn

TARGETS = json.load(open(os.path.join(os.path.dirname(__file__), "targets.json")))


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        chunk = b"\x02" * 2**20
        with open(os.path.join(tempfile.gettempdir(), "fill.bin"), "wb") as f:
            for _ in range(TARGETS["fill_mb"]):
                f.write(chunk)
        self.fc = nn.Linear(in_shape[1], out_shape[0])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))
