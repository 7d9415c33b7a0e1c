"""`nnlite run`: convert and benchmark on devices; headless or with the console on a terminal."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click

from nnlite_tui.commands.options import EXIT_CODES_HELP, announce_isolation, convert_options, \
    convert_options_from, discover_or_exit, source_options
from nnlite_tui.core.bench.rounds import DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS
from nnlite_tui.exit_codes import ExitCode

MAX_REEXECS = 3


def profile_mode(choice: str | None, backend: str) -> str | None:
    if choice == "auto":
        return "builtin" if backend == "cpu" else "xnnpack"
    return choice


@click.command(epilog=EXIT_CODES_HELP)
@source_options
@convert_options
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Run directory; an existing one is resumed.")
@click.option("--device", "devices", multiple=True, default=("host",), show_default=True,
              help="host, an adb serial, emulator:<AVD>, or all (repeatable).")
@click.option("--rounds", type=click.IntRange(min=1), default=DEFAULT_ROUNDS, show_default=True,
              help="Time each unit in this many fresh benchmark processes (app launches), separated by other "
                   "work; the report's median and interval come from them. The budgets below are the unit's "
                   "total, split evenly across its rounds.")
@click.option("--max-rounds", type=click.IntRange(min=1), default=None,
              help=f"Rounds an unstable unit may get in all [default: --rounds + {DEFAULT_MAX_ROUNDS - DEFAULT_ROUNDS}].")
@click.option("--runs", type=click.IntRange(min=1), default=50, show_default=True,
              help="Timed runs, at least (over all rounds).")
@click.option("--min-seconds", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Timed seconds, at least (over all rounds).")
@click.option("--max-runs", type=click.IntRange(min=1), default=10000, show_default=True,
              help="Cap on timed runs (over all rounds).")
@click.option("--max-seconds", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Cap on timed seconds (over all rounds).")
@click.option("--warmup", type=click.IntRange(min=0), default=5, show_default=True,
              help="Untimed warm-up runs, in every round.")
@click.option("--warmup-seconds", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Warm up for at least this long as well as --warmup runs (benchmark_model's --warmup_min_secs; "
                   "over all rounds).")
@click.option("--require-full-delegation", is_flag=True,
              help="Fail a benchmark when the delegate takes only part of the graph (adb devices).")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True, help="Interpreter threads.")
@click.option("--backend", type=click.Choice(["xnnpack", "cpu", "gpu", "nnapi"]), default="xnnpack",
              show_default=True, help="Delegate; the report says which one actually ran.")
@click.option("--profile-ops", type=click.Choice(["auto", "xnnpack", "builtin", "both"]), is_flag=False,
              flag_value="auto", default=None, help="After the timed runs, a separate profiled pass records per-op "
              "times (auto: the benchmark's kernels) into the report's ops block (on adb devices where "
              "the app can: android-app/PROTOCOL.md section 9e).")
@click.option("--energy", is_flag=True, help="After the timed runs, measure energy per inference: an idle and a "
              "load window with the battery counters sampled (adb devices; the host only with a readable RAPL "
              "counter). A consistent relative estimate on one device, not an absolute meter (README, Energy).")
@click.option("--energy-seconds", type=click.FloatRange(1.0, 600.0), default=10.0, show_default=True,
              help="Length of each energy window (the counters update at 1-10 Hz: give them several seconds).")
@click.option("--max-attempts", type=click.IntRange(min=1), default=3, show_default=True,
              help="Attempts per model for transient faults (timeouts, crashes, device faults).")
@click.option("--cooldown", "cooldown_s", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Seconds to cool down after a device fault.")
@click.option("--cooldown-temp", type=float, help="Before each benchmark, wait until the device is cooler (C).")
@click.option("--distribute", is_flag=True, help="Spread models over the devices instead of running each on all.")
@click.option("--apk", type=click.Path(dir_okay=False), help="Benchmark APK for adb devices.")
@click.option("--retry-failed", is_flag=True, help="Retry models that failed in an earlier run of RUN_DIR.")
@click.option("--force-config", is_flag=True, help="Resume even though result-changing settings differ.")
@click.option("--isolation", type=click.Choice(["pause", "affinity", "none"]), default="pause", show_default=True,
              help="Host benchmarks: pause conversions while timing, pin them to other cores, or neither.")
@click.option("--keep-artifacts", "--keep-tflite", "keep_artifacts", type=click.Choice(["all", "failed", "none"]),
              default="failed", show_default=True,
              help="Which converted models (each runtime's artifact) the run directory keeps once a unit is finished "
                   "(the conversion cache keeps its own copies, bounded by its size cap).")
@click.option("--min-free-gb", type=click.FloatRange(min=0), default=None,
              help="Conversions wait while the run's or the cache's disk has less free space than this "
                   "(default: 2 GB or 5% of the filesystem, whichever is more).")
@click.option("--cluster", metavar="ADDRESS",
              help="Run over a Ray cluster: local (a private Ray on this machine), auto ($RAY_ADDRESS) or a "
                   "Ray address; needs the ray extra.")
@click.option("--headless", is_flag=True, help="No console, even on a terminal.")
@click.option("--theme", help="Console colour theme.")
def run(**kw) -> None:
    """Convert and benchmark models, writing one report per model and device into RUN_DIR/reports.

    Resumable: rerun the same command to continue; done models are not redone. On a terminal the
    control console opens; with --headless (or without a terminal) progress is printed as lines.
    """
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.cluster.session import ClusterError  # imports no ray
    from nnlite_tui.core.run.config import ConfigMismatch, RunConfig
    from nnlite_tui.core.devices.registry import DeviceSpecError
    from nnlite_tui.core.run.setup import build_pipeline
    from nnlite_tui.core.store.files import StoreError

    if kw["cluster"]:
        from nnlite_tui.core.cluster.address import ClusterUnreachable, check_address

        try:
            check_address(kw["cluster"])  # before discovery, the store or Ray: a wrong address fails in seconds
        except ClusterUnreachable as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.USAGE)
    specs = discover_or_exit(kw)
    if not specs:
        click.echo("No models found in " + ", ".join(kw["sources"]), err=True)
        sys.exit(ExitCode.NOTHING)
    convert = convert_options_from(kw, specs)
    announce_isolation(convert)
    try:
        bench = BenchSettings(warmup=kw["warmup"], runs=kw["runs"], min_seconds=kw["min_seconds"],
                              max_runs=max(kw["max_runs"], kw["runs"]), max_seconds=kw["max_seconds"],
                              threads=kw["threads"], backend=kw["backend"], warmup_seconds=kw["warmup_seconds"],
                              require_full_delegation=kw["require_full_delegation"],
                              profile_ops=profile_mode(kw["profile_ops"], kw["backend"]),
                              energy=kw["energy"], energy_seconds=kw["energy_seconds"])
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    _check_runtime_settings(kw["runtime"], kw["backend"], kw["require_full_delegation"], kw["devices"])
    headless = kw["headless"] or not sys.stdout.isatty()
    if kw["max_rounds"] is not None and kw["max_rounds"] < kw["rounds"]:
        raise click.UsageError(f"--max-rounds {kw['max_rounds']} is below --rounds {kw['rounds']}")
    cfg = RunConfig(sources=list(kw["sources"]), out=Path(kw["out"]), devices=list(kw["devices"]), bench=bench,
                    convert=convert, in_shape=kw["in_shape"], num_classes=kw["num_classes"],
                    include=tuple(kw["include"]), exclude=tuple(kw["exclude"]), limit=kw["limit"],
                    max_params=kw["max_params"], max_attempts=kw["max_attempts"], cooldown_s=kw["cooldown_s"],
                    cooldown_temp=kw["cooldown_temp"], distribute=kw["distribute"], retry_failed=kw["retry_failed"],
                    force_config=kw["force_config"], isolation=kw["isolation"], allow_reexec=headless,
                    apk=kw["apk"], keep_artifacts=kw["keep_artifacts"],
                    min_free_bytes=None if kw["min_free_gb"] is None else int(kw["min_free_gb"] * 1e9),
                    precisions=tuple(kw["precision"]), runtimes=tuple(kw["runtime"]), rounds=kw["rounds"],
                    max_rounds=kw["max_rounds"] or kw["rounds"] + DEFAULT_MAX_ROUNDS - DEFAULT_ROUNDS)
    try:
        # The workers' imports (seconds) overlap the console's start-up, or the headless set-up.
        remote = None
        if kw["cluster"]:
            from nnlite_tui.core.cluster.setup import cluster_parts

            address = kw["cluster"]
            remote = lambda n_models: cluster_parts(cfg, n_models, address)  # noqa: E731
        pipeline = build_pipeline(cfg, specs, remote=remote, prestart=True)
    except (ConfigMismatch, DeviceSpecError) as exc:
        raise click.UsageError(str(exc)) from None
    except ClusterError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.NOTHING)
    except StoreError as exc:  # corrupt state (3), another writer (8), or a disk that refused the write (7)
        from nnlite_tui.errors import report
        sys.exit(report(exc))
    if headless:
        code = _run_headless(pipeline)
    else:
        from nnlite_tui.core.run.jsonl import JsonlReporter
        from nnlite_tui.tui.app import run_tui

        jsonl = JsonlReporter(pipeline.run_dir)
        try:
            code = run_tui(lambda: pipeline, theme=kw["theme"], run_dir=str(cfg.out), reporters=[jsonl])
        finally:
            pipeline.shutdown()  # the console may close before the run began: its prestarted workers too
            jsonl.close()
            pipeline.store.close()
    if pipeline.cluster is not None:
        pipeline.cluster.shutdown()
    _stop_adb_server_started_here()
    _write_summary(pipeline)
    _say_what_a_rerun_does(pipeline.run_dir)
    if code == ExitCode.STOPPED:
        click.echo(f"Stopped. Resume with the same command (the run is in {cfg.out}).", err=True)
    sys.exit(code)


def _check_runtime_settings(runtimes: tuple[str, ...], backend: str, require_full: bool, devices) -> None:
    """What a runtime's units cannot honour is refused before the run starts, not unit by unit."""
    from nnlite_tui.core.runtimes import get_runtime

    on_device = any(d != "host" for d in devices)
    for name in runtimes:
        refused = get_runtime(name).refuses(backend, require_full, on_device)
        if refused:
            raise click.UsageError(refused)


def _run_headless(pipeline) -> int:
    from nnlite_tui.core.run.console import ConsoleReporter
    from nnlite_tui.core.run.control import Control
    from nnlite_tui.core.events import MultiReporter
    from nnlite_tui.core.run.jsonl import JsonlReporter

    control = Control()
    signals = {"n": 0}

    def on_signal(signum, frame) -> None:
        signals["n"] += 1
        if signals["n"] == 1:
            click.echo(f"\n{signal.Signals(signum).name}: stopping after the current step "
                       "(again to abandon it)", err=True)
            control.request_stop(now=False)
        else:
            control.request_stop(now=True)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    jsonl = JsonlReporter(pipeline.run_dir)
    try:
        outcome = pipeline.run(MultiReporter(ConsoleReporter(), jsonl), control)
    finally:
        jsonl.close()
        pipeline.store.close()
    if outcome.reexec:
        _reexec()
    return ExitCode.STOPPED if outcome.stopped else ExitCode.OK


def _reexec() -> None:
    count = int(os.environ.get("NNLITE_REEXEC_COUNT", "0"))
    if count >= MAX_REEXECS:
        click.echo(f"recovery: not re-executing again (already {count} times); rerun to resume", err=True)
        sys.exit(ExitCode.STOPPED)
    os.environ["NNLITE_REEXEC_COUNT"] = str(count + 1)
    click.echo("recovery: re-executing the process to resume from the store", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "nnlite_tui", *sys.argv[1:]])


def _stop_adb_server_started_here() -> None:
    """An adb server this run started (none answered) ends with it; one that was running stays."""
    if "nnlite_tui.core.devices.adb_link" not in sys.modules:  # a host-only run never loaded adb
        return
    from nnlite_tui.core.devices import adb_link

    started = adb_link.started_here()
    if started is not None:
        adb_link.stop_owned_server()
        click.echo(f"stopped the adb server this run started on port {started[0]}", err=True)


def _say_what_a_rerun_does(run_dir: Path) -> None:
    """Failures of the environment are retried by a plain rerun; the model's own need --retry-failed."""
    from nnlite_tui.core.outcomes import StageError
    from nnlite_tui.core.run.unit_faults import is_environmental
    from nnlite_tui.core.store.files import load_snapshot

    _, records = load_snapshot(run_dir)
    failed = [r for r in records if r.get("status") == "failed"]
    env = sum(1 for r in failed if is_environmental(StageError.from_dict(r.get("error"))))
    if env:
        click.echo(f"{env} unit(s) failed because of the environment (disk, device offline): rerunning the same "
                   "command retries them", err=True)
    if len(failed) > env:
        click.echo(f"{len(failed) - env} unit(s) failed on their own: a rerun keeps them failed; add "
                   "--retry-failed to try them again", err=True)


def _write_summary(pipeline) -> None:
    from nnlite_tui.core.report.summary import print_table, write_summary

    print_table(write_summary(pipeline.run_dir))
