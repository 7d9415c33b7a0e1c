"""The system calls a sandbox refuses, as the seccomp program bubblewrap installs (--seccomp FD).

The network namespace takes away network sockets and abstract unix sockets, but not unix sockets
bound to a path: a listener of the host's (a database, a desktop bus, an agent) whose socket file is
anywhere in the view (the model's own folder, say) could be connected to. So socket(AF_UNIX, ...)
fails with EACCES; socketpair() is still allowed (it connects to nothing outside the process), and
descriptors handed in by the parent keep working. System calls of another architecture (the x32
ABI, 32-bit programs) fail with ENOSYS, since their numbers would slip past the filter. The calls that
reach into another process (ptrace, process_vm_*, pidfd_open, pidfd_getfd) fail with EPERM.

Classic BPF, written out here for x86-64 and arm64 (the architectures nnlite runs on); elsewhere
there is no program and `nnlite doctor` says that unix sockets are not refused.
"""

from __future__ import annotations

import os
import platform
import struct

# linux/audit.h, linux/seccomp.h, asm/unistd.h
_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198), "arm64": (0xC00000B7, 198)}
# Reaching into another process: ptrace, process_vm_readv/writev, pidfd_open, pidfd_getfd. A process
# a model left running could take a later job's result socket (pidfd_getfd) or rewrite its memory.
_INTO_OTHERS = {0xC000003E: (101, 310, 311, 434, 438), 0xC00000B7: (117, 270, 271, 434, 438)}
_EPERM = 1
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EACCES, _ENOSYS = 13, 38
_AF_UNIX = 1

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH_OFF, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (little-endian: arg0's low word)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, or None where nnlite has none."""
    found = _ARCH.get(machine or platform.machine())
    if found is None:
        return None
    arch, nr_socket = found
    x32 = arch == 0xC000003E
    insns = [
        _insn(_LD_W_ABS, 0, 0, _ARCH_OFF),
        _insn(_JEQ_K, 1, 0, arch),
        _insn(_RET_K, 0, 0, _RET_ERRNO | _ENOSYS),  # another architecture's numbering
        _insn(_LD_W_ABS, 0, 0, _NR),
    ]
    if x32:
        insns += [_insn(_JGE_K, 0, 1, _X32_BIT), _insn(_RET_K, 0, 0, _RET_ERRNO | _ENOSYS)]
    for nr in _INTO_OTHERS[arch]:
        insns += [_insn(_JEQ_K, 0, 1, nr), _insn(_RET_K, 0, 0, _RET_ERRNO | _EPERM)]
    insns += [
        _insn(_JEQ_K, 0, 3, nr_socket),
        _insn(_LD_W_ABS, 0, 0, _ARG0),
        _insn(_JEQ_K, 0, 1, _AF_UNIX),
        _insn(_RET_K, 0, 0, _RET_ERRNO | _EACCES),
        _insn(_RET_K, 0, 0, _RET_ALLOW),
    ]
    return b"".join(insns)


def program_fd() -> int | None:
    """A descriptor from which bwrap reads the program (a sealed memfd, read from its start), or None."""
    code = program()
    if code is None or not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("nnlite-seccomp", os.MFD_CLOEXEC)
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
