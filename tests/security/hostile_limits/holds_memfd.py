"""Holds memory in a memfd (not in its RSS) while it builds, then converts like any small model."""

import json
import os

import torch.nn as nn

TARGETS = json.load(open(os.path.join(os.path.dirname(__file__), "targets.json")))
HELD = []


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        fd = os.memfd_create("held")
        chunk = b"\x01" * 2**24
        for _ in range(TARGETS["memfd_mb"] // 16):
            os.write(fd, chunk)
        HELD.append(fd)
        self.fc = nn.Linear(in_shape[1], out_shape[0])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))
