"""`nnlite doctor`: which isolation model code runs under on this machine, and why not more."""

from __future__ import annotations

import sys

import click

from nnlite_tui.exit_codes import ExitCode

CAPS = {
    "cgroup": "a pids cgroup per sandbox (pids.max): the kernel refuses the fork over the cap",
    "rlimit": "RLIMIT_NPROC inside the sandbox's own user namespace: the kernel refuses the fork over the cap",
    "watchdog": "no kernel limit here: the parent counts the tasks every 0.1 s and kills the sandbox over the "
                "cap (a fast fork loop can outrun it)",
}


@click.command(epilog="Exit code 0 when model code runs in the sandbox, 5 when it cannot here.")
def doctor() -> None:
    """Print which isolation model code runs under here (the sandbox, or what is left without it) and why."""
    from nnlite_tui.core.convert.sandbox import limits
    from nnlite_tui.core.convert.sandbox.availability import check
    from nnlite_tui.core.convert.sandbox.policy import package_root, python_paths

    try:
        found = check()
    except ValueError as exc:  # a bad $NNLITE_SANDBOX_MAX_TASKS
        raise click.UsageError(str(exc)) from None
    click.echo(found.describe())
    rows = [("bubblewrap", f"{found.bwrap} ({found.version})" if found.version else "not found on PATH")]
    if found.sandboxed:
        rows += [
            ("namespaces", "user, pid, network, IPC, UTS" if found.user_namespace else
             "pid, network, IPC, UTS (no user namespaces here: root's bwrap without one, no capabilities)"),
            ("network", "its own namespace with only a loopback device: no route anywhere"),
            ("files", "the system and the Python environment read-only, the model sources read-only, only the "
                      "worker's scratch writable; the home directory, the run directory and /tmp not visible"),
            ("processes", f"at most {found.max_tasks} tasks (processes and threads) at once by {found.process_cap}: "
                          f"{CAPS[found.process_cap]}; all end with the worker (its pid namespace)"),
        ]
        rows += limits.rows(found)
    elif found.mechanism == "unshare":
        rows += [("network", "its own namespace (unshare): no route anywhere"),
                 ("files", "NOT protected: model code can read and write what you can"),
                 ("processes", f"watched: at most {found.max_tasks} tasks, counted every 0.1 s; a process that "
                               f"leaves the worker's session can outlive it")]
    else:
        rows += [("network", "the in-process guard only (refuses connections off this host; C code passes it)"),
                 ("files", "NOT protected: model code can read and write what you can"),
                 ("processes", "watched, not contained")]
    rows += [("python", ", ".join(str(p) for p in python_paths()) + " (read-only in the sandbox)"),
             ("package", f"{package_root()} (PYTHONPATH in the sandbox)"),
             ("checked in", f"{found.seconds * 1000:.0f} ms")]
    for name, text in rows:
        click.echo(f"  {name + ':':<13} {text}")
    if not found.sandboxed:
        click.echo("  with --require-sandbox, `nnlite run` and `nnlite convert` refuse to start here")
        sys.exit(ExitCode.NOTHING)
