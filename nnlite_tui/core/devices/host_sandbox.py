"""The host benchmark process in a sandbox of its own: the artifact it loads was written by a process
that ran model code, so it is hostile data for the runtime's loader, the graph reader and the
profiled pass, which all run in that process.

The same bubblewrap sandbox as the conversion workers (convert/sandbox): no network, the system and
the Python environment read-only, its own scratch (a small tmpfs), the user's home, the run directory,
the cache and the system temp directory out of sight, the process and memory caps, the exact list of
environment variables. What it may see besides: the exchange directory (writable; the parent puts
args.json and a copy of the artifact there and reads result.json back), the CPU and power readings
of /sys it times and measures with, and any extra read-only path the caller names (a powercap tree).
Namespaces add no CPU cost to the timed loop (bench/host_sandbox_timing.py measures it).

$NNLITE_BENCH_SANDBOX=0 runs it as a plain process (as `--no-sandbox` does for the workers); so does
a machine without the sandbox, where nothing stronger can be had.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from nnlite_tui.core.convert.sandbox.availability import current
from nnlite_tui.core.convert.sandbox.launch import passed_env
from nnlite_tui.core.convert.sandbox.policy import Launch, SandboxPolicy, wrap

ENV_SWITCH = "NNLITE_BENCH_SANDBOX"
SCRATCH_BYTES = 256 * 2**20
# Read by the benchmark: huge pages' mode, the CPUs' frequencies, RAPL's energy counters.
SYSTEM_READS = ("/sys/kernel/mm/transparent_hugepage", "/sys/class/powercap", "/sys/devices/virtual/powercap")
# Set by the parent for the benchmark (bench_env), besides the exact list the workers get.
BENCH_ENV = ("GLIBC_TUNABLES",)


def wanted() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and current().sandboxed


def exchange_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="nnlite-bench-"))


def launch(argv: list[str], env: dict[str, str], exchange: Path, read_only: tuple[str, ...] = (),
           memory_mb: int | None = None) -> Launch:
    """argv (the benchmark's command line) in the sandbox, with exchange writable."""
    found = current()
    scratch = exchange / "scratch"
    scratch.mkdir(exist_ok=True)
    inner = {**passed_env(), **{k: v for k, v in env.items() if k in BENCH_ENV}}
    extra = tuple(Path(p).resolve() for p in (*SYSTEM_READS, *read_only) if p and os.path.exists(p))
    policy = SandboxPolicy(scratch=scratch, read_only=extra, writable=(exchange,), max_tasks=found.max_tasks or None,
                           env=inner, memory_bytes=memory_mb * 2**20 if memory_mb else None,
                           scratch_bytes=SCRATCH_BYTES)
    kind = "watchdog" if found.process_cap == "watchdog" else None
    return wrap(argv, policy, user_namespace=found.user_namespace, bwrap=found.bwrap,
                options=found.options or None, cap_kind=kind)
