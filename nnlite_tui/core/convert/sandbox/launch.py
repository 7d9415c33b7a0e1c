"""Starting a process that runs model code, under the isolation in effect: the run's part of every
sandbox's policy (SandboxSetup), the command line for each mechanism, and the cost probe's start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nnlite_tui.core.convert.sandbox import spawner
from nnlite_tui.core.convert.sandbox.availability import Availability, in_effect, unshare_prefix
from nnlite_tui.core.convert.sandbox.policy import PATH, Launch, SandboxPolicy, inner_env, outermost, wrap
from nnlite_tui.core.convert.sandbox.process_cap import ProcessCap
from nnlite_tui.core.convert.sandbox.sources import Sources, checkpoint_caches, dotted, source_roots
from nnlite_tui.core.convert.worker.attempt_record import ENV_WRITABLE
from nnlite_tui.core.runtimes import converter_env_names

# What the worker, torch and the converters read from the environment, by exact name; nothing else of the
# user's goes in. Not by prefix: TF_VAR_db_password or TORCH_HUB_TOKEN would follow TF_ or TORCH_ into
# model code, and from its error message into reports, state and events. Values are the user's own
# settings (locale, thread counts, log levels), none a secret.
PASSED_ENV = frozenset({
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ",
    "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONFAULTHANDLER",
    "OMP_NUM_THREADS", "OMP_DYNAMIC", "OMP_PROC_BIND", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS", "TF_NUM_INTEROP_THREADS",
    "TF_NUM_INTRAOP_THREADS", "XLA_FLAGS", "JAX_PLATFORMS",
    "TORCH_LOGS", "TORCH_SHOW_CPP_STACKTRACES", "TORCH_CPP_LOG_LEVEL",
}) | converter_env_names()  # and what each runtime's converter reads (its declaration)


ENV_SCRATCH_MB = "NNLITE_SANDBOX_SCRATCH_MB"
SCRATCH_FLOOR_MB = 1024


def passed_env() -> dict[str, str]:
    """The user's variables that go into a sandbox: those named in PASSED_ENV, nothing else."""
    return {k: v for k, v in os.environ.items() if k in PASSED_ENV}


def scratch_mb(memory_mb: int | None = None) -> int:
    """The scratch's size: $NNLITE_SANDBOX_SCRATCH_MB, else half the worker's memory cap (the scratch
    is memory), at least SCRATCH_FLOOR_MB; the converters keep about twice a model's weights there."""
    value = os.environ.get(ENV_SCRATCH_MB, "").strip()
    if value:
        if not value.isdigit() or int(value) < 16:
            raise ValueError(f"${ENV_SCRATCH_MB}={value!r}: give a whole number of MB, at least 16")
        return int(value)
    return max(SCRATCH_FLOOR_MB, (memory_mb or 0) // 2)


@dataclass(frozen=True)
class SandboxSetup:
    """The run's part of every sandbox's policy; the worker adds its own scratch."""

    availability: Availability
    sources: Sources = Sources()
    read_only: tuple[Path, ...] = ()  # calibration arrays, checkpoint caches
    hidden: tuple[Path, ...] = ()  # the run and cache directories, should a source directory hold them
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_run(cls, availability: Availability, sources: Sources, calibration_dir: Path | None = None,
                hidden: tuple[Path, ...] = ()) -> SandboxSetup:
        caches, env = checkpoint_caches()
        extra = (Path(calibration_dir).resolve(),) if calibration_dir else ()
        return cls(availability, sources, (*caches, *extra), tuple(Path(os.path.abspath(h)) for h in hidden), env)

    def policy(self, scratch: Path, sources: Sources, writable: tuple[Path, ...] = (),
               memory_mb: int | None = None) -> SandboxPolicy:
        """The policy of one sandbox; memory_mb (the worker's cap) is then also set by the kernel where
        it can be, and sizes the scratch."""
        read_only = outermost((*sources.read_only, *self.read_only))
        # A hidden directory must not cover a source (a run directory given as a model folder, say).
        hidden = tuple(h for h in self.hidden if not any(r == h or h in r.parents for r in read_only))
        dot_dirs, dot_files = dotted(sources.read_only)
        env = {**passed_env(), **self.env,
               ENV_WRITABLE: os.pathsep.join(str(p) for p in (scratch, *writable))}
        return SandboxPolicy(scratch=scratch, read_only=read_only, writable=writable, hidden=(*hidden, *dot_dirs),
                             masked=dot_files,
                             python_path=sources.python_path, max_tasks=self.availability.max_tasks or None, env=env,
                             memory_bytes=memory_mb * 2**20 if memory_mb else None,
                             scratch_bytes=scratch_mb(memory_mb) * 2**20)


def launch_for(availability: Availability, argv: list[str], policy: SandboxPolicy) -> Launch:
    """argv under the strongest isolation found: the sandbox, a network namespace alone, or as is (the
    last two with the sandbox's environment and a watchdog on the process count)."""
    if availability.mechanism == "bwrap":
        kind = "watchdog" if availability.process_cap == "watchdog" else None
        return wrap(argv, policy, user_namespace=availability.user_namespace, bwrap=availability.bwrap,
                    options=availability.options or None, cap_kind=kind)
    cap = ProcessCap("watchdog", policy.max_tasks) if policy.max_tasks else ProcessCap("none", None)
    prefix = unshare_prefix() if availability.mechanism == "unshare" else []
    return Launch([*prefix, *argv], cap, inner_env(policy, os.environ.get("PATH", PATH)))


def start_model_process(argv: list[str], mode: str, specs: list, **popen: Any) -> subprocess.Popen:
    """A short-lived helper that imports model code (the cost probe), in a sandbox of its own with a
    temporary scratch, removed when it ends; as a plain subprocess when `mode` is "off"."""
    availability = in_effect(mode)
    if availability.mechanism == "off":
        return subprocess.Popen(argv, **popen)
    scratch = Path(tempfile.mkdtemp(prefix="nnlite-probe-"))
    setup = SandboxSetup.for_run(availability, source_roots(specs))
    launch = launch_for(availability, argv, setup.policy(scratch, setup.sources))
    try:
        proc = spawner.popen(launch.argv, env=launch.env, cwd=scratch, pass_fds=launch.pass_fds, **popen)
    except BaseException:
        launch.release()
        shutil.rmtree(scratch, ignore_errors=True)
        raise

    def clean_up() -> None:
        proc.wait()
        launch.release()
        shutil.rmtree(scratch, ignore_errors=True)

    threading.Thread(target=clean_up, daemon=True, name="sandbox-probe-cleanup").start()
    return proc
