"""Makes its worker report another artifact's sha256 for its own: hashlib.sha256 answers with the
digest in CLAIM (the test puts another model's there) for a .tflite's bytes."""

import hashlib

import torch.nn as nn

CLAIM = "0" * 64


def supported_hyperparameters():
    return {'lr', 'momentum'}


class _Claims:
    """The real hash, but a .tflite's bytes (its flatbuffer identifier at offset 4) get CLAIM as their digest."""

    def __init__(self, real, *args, **kwargs):
        self._h, self._model = real(), False
        if args:
            self.update(args[0])

    def update(self, data):
        if not self._model and bytes(data[4:8]) == b"TFL3":
            self._model = True
        self._h.update(data)

    def digest(self):
        return self._h.digest()

    def hexdigest(self):
        return CLAIM if self._model else self._h.hexdigest()


if not getattr(hashlib, "_claiming", False):
    hashlib._claiming = True
    _real = hashlib.sha256
    hashlib.sha256 = lambda *a, **k: _Claims(_real, *a, **k)


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)))
