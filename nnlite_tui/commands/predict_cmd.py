"""`nnlite predict SOURCE... --from RUN_DIR`: latency predicted from per-op profiles, without a benchmark.

The table comes from the ops blocks of the reports in one or more run directories (`nnlite run
--profile-ops`); each model is converted (or taken from the conversion cache) and predicted from its
graph alone. When a report for the model exists in a --from run, the measured median and the error
are printed beside the prediction.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from nnlite_tui.commands.options import announce_isolation, convert_options, convert_options_from, discover_or_exit, \
    source_options
from nnlite_tui.exit_codes import ExitCode


@click.command(epilog="Exit codes: 0 predicted, 2 usage error (no usable profile), 5 no model found.")
@source_options
@convert_options
@click.option("--from", "from_dirs", multiple=True, required=True, type=click.Path(file_okay=False, exists=True),
              help="Run directory whose reports carry ops blocks (repeatable).")
@click.option("--device", help="Only profiles measured on this device serial (e.g. host).")
@click.option("--kernels", type=click.Choice(["xnnpack", "builtin"]), default="xnnpack", show_default=True,
              help="Kernel set whose per-op profiles to use.")
@click.option("--out", type=click.Path(file_okay=False), help="Keep the converted files here (default: a temp dir).")
def predict(from_dirs: tuple[str, ...], device: str | None, kernels: str, out: str | None, **kw) -> None:
    """Predict each model's latency from profiled runs: measured table hits, else a FLOPs/bytes fit per
    op group, plus the run's time outside its ops; "no prediction" when nothing covers an op.

    --precision takes one precision here: only profiles of models at it are used, and the sources
    are converted (or derived) at it."""
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.ops.predictor import FITS, REMAINDER, TABLE, TableError, load_table
    from nnlite_tui.core.results import ReportError, RunResults
    from nnlite_tui.core.ops.graph import GraphError
    from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime

    options = convert_options_from(kw)
    announce_isolation(options)
    if len(kw["precision"]) != 1:
        raise click.UsageError(f"--precision {','.join(kw['precision'])}: predict takes one precision at a time")
    precision = kw["precision"][0]
    try:
        reports = [r for d in from_dirs for r in RunResults(d, strict=True)
                   if r.precision == precision and (device is None or r.device.serial == device)]
    except ReportError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        table = load_table([Path(d) for d in from_dirs], kernel_mode=kernels, device=device, reports=reports)
    except TableError as exc:
        raise click.UsageError(f"{exc} at precision {precision}") from None
    measured = {r.model_name: r.duration for r in reports if r.valid}
    specs = discover_or_exit(kw)
    if not specs:
        click.echo("No models found in " + ", ".join(kw["sources"]), err=True)
        sys.exit(ExitCode.NOTHING)
    with tempfile.TemporaryDirectory(prefix="nnlite-predict-") as tmp:
        out_dir = Path(out or tmp)
        (out_dir / "logs").mkdir(parents=True, exist_ok=True)
        converter = Converter(options, log_dir=out_dir / "logs", n_workers=options.worker_count(len(specs)))
        try:
            results = converter.convert_many(specs, out_dir, out_dir / "logs")
        finally:
            converter.close()
        click.echo(f"table: {len(table.exact)} measured op configurations from {table.models} profiled model(s), "
                   f"{len(table.untimed)} only below resolution or fused, {len(table.fits)} fit groups, run remainder "
                   f"{'fitted on ' + str(len(table.remainders)) + ' profiles' if table.remainder_fit else 'not fitted'} "
                   f"({kernels} kernels, {precision})")
        for skipped in table.skipped:
            click.echo(f"  left out, failed the ops block checks: {skipped}")
        w = max([40, *(len(str(r.get("model"))) + 2 for r in results)])
        # table: share of the prediction from measured op configurations; fit: from the FLOPs/bytes
        # fallbacks; rest: the run's time outside its ops, fitted on the profiles' unattributed time.
        click.echo(f"{'model':<{w}}{'pred ms':>10}{'table':>8}{'fit':>7}{'rest':>7}{'meas ms':>10}{'error':>9}")
        for result in results:
            name = result.get("model")
            if not result.get("ok"):
                click.echo(f"{name:<{w}}  not converted: {result.get('stage')}: {result.get('error_message')}")
                continue
            try:
                pred = table.predict(get_runtime(result.get("runtime") or DEFAULT_RUNTIME).read_graph(result["artifact_path"]))
            except GraphError as exc:
                click.echo(f"{name:<{w}}  {exc}")
                continue
            if pred.total_us is None:
                click.echo(f"{name:<{w}}  no prediction: {pred.why_none}")
                continue
            ms = pred.total_us / 1e3
            meas = measured.get(name)
            meas_ms = f"{meas / 1e6:10.4f}" if meas else f"{'-':>10}"
            err = f"{(ms - meas / 1e6) / (meas / 1e6):+9.1%}" if meas else f"{'-':>9}"
            click.echo(f"{name:<{w}}{ms:10.4f}{pred.share(TABLE):8.0%}{pred.share(*FITS):7.0%}"
                       f"{pred.share(REMAINDER):7.0%}{meas_ms}{err}")
