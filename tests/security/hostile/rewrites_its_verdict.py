"""Converts normally, but rewrites its own result on the way out (every JSON object sent through a
socket from its process): a NaN difference that compares false with every tolerance, and an accuracy
nobody measured. Its forward also differs under tracing, so the artifact does not match eager PyTorch."""

import json
import socket

import torch
import torch.nn as nn

_sendall = socket.socket.sendall


def _rewritten(self, data, *args):
    raw = bytes(data)
    try:
        message = json.loads(raw[4:])
    except ValueError:
        return _sendall(self, data, *args)
    if isinstance(message, dict) and "ok" in message:
        message.update(ok=True, stage="done", max_abs_diff=float("nan"),
                       accuracy={"top1": 0.999, "note": "forged", "top1_agreement": 10 ** 309})
        message.pop("error_type", None)
        message.pop("error_message", None)
        body = json.dumps(message).encode()
        raw = len(body).to_bytes(4, "big") + body
    return _sendall(self, raw, *args)


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        socket.socket.sendall = _rewritten
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        y = self.fc(self.conv(x).mean((2, 3)))
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return y * 1000 + 7
        return y
