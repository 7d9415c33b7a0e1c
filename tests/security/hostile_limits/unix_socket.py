"""Connects to a unix socket beside itself (a host service's socket in a shared folder), sends a token,
then converts like any small model whether or not that worked."""

import json
import os
import socket

import torch.nn as nn

TARGETS = json.load(open(os.path.join(os.path.dirname(__file__), "targets.json")))


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(os.path.join(os.path.dirname(os.path.abspath(__file__)), TARGETS["socket"]))
                s.sendall(TARGETS["token"].encode())
        except OSError:
            pass
        self.fc = nn.Linear(in_shape[1], out_shape[0])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))
