"""Opens again every descriptor it holds that names a .log file, read-write and truncated (a new
open of /proc/self/fd/N has no O_APPEND), and writes its own text there: a log the runner shares
among its workers would be rewritten from inside the sandbox."""

import os

import torch.nn as nn

MARK = b"REWRITTEN-FROM-INSIDE\n"


def supported_hyperparameters():
    return {'lr', 'momentum'}


def _rewrite_logs() -> None:
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").endswith(".log"):
                continue
            fd = os.open(f"/proc/self/fd/{name}", os.O_RDWR | os.O_TRUNC)
            os.write(fd, MARK)
            os.close(fd)
        except OSError:
            continue


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        _rewrite_logs()
        self.fc = nn.Linear(in_shape[1], out_shape[0])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))
