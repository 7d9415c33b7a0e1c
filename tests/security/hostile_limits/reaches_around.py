"""Tries the system calls that reach around a socket() filter or into another process: io_uring
(which can make a unix socket without socket()), pidfd_open/pidfd_getfd, process_vm_readv, ptrace.
It fails, naming them, if any of them works; otherwise it converts like any small model."""

import ctypes
import os

import torch.nn as nn

LIBC = ctypes.CDLL(None, use_errno=True)
X86_64 = os.uname().machine == "x86_64"
CALLS = {  # name: (number, arguments)
    "io_uring_setup": (425, (1, ctypes.byref(ctypes.create_string_buffer(120)))),
    "pidfd_open": (434, (os.getpid(), 0)),
    "ptrace": (101 if X86_64 else 117, (0, 0, 0, 0)),  # PTRACE_TRACEME
    "process_vm_readv": (310 if X86_64 else 270, (os.getpid(), 0, 0, 0, 0, 0)),
}


def supported_hyperparameters():
    return {'lr', 'momentum'}


def reached() -> list[str]:
    out = []
    for name, (number, args) in CALLS.items():
        result = LIBC.syscall(number, *args)
        if result >= 0 or ctypes.get_errno() != 38:  # 38: ENOSYS, as on a kernel without the call
            out.append(f"{name}={result}/{ctypes.get_errno()}")
    return out


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        got = reached()
        if got:
            raise RuntimeError(f"reached around the sandbox: {', '.join(got)}")
        self.fc = nn.Linear(in_shape[1], out_shape[0])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))
