"""`nnlite convert SOURCE... --out DIR`: convert and validate, write the artifacts + one JSON per unit."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import click

from nnlite_tui.core.text_safety import printable

from nnlite_tui.commands.options import announce_isolation, convert_options, convert_options_from, discover_or_exit, \
    source_options
from nnlite_tui.exit_codes import ExitCode
from nnlite_tui.core.run.console import fmt_duration
from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.run_dir import safe_name
from nnlite_tui.core.outcomes import error_text


@click.command(epilog="Exit codes: 0 done (failed models are results, listed by stage), 2 usage error, "
                      "5 no model found.")
@source_options
@convert_options
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Output directory.")
def convert(out: str, **kw) -> None:
    """Convert models (LEMUR files, a LEMUR tree, file.py:factory, module:factory) to .tflite (LiteRT)
    and/or .pte (ExecuTorch, --runtime).

    Every file is validated in its runtime against PyTorch; failures are explained by stage.
    """
    from nnlite_tui.core.convert.converter import Converter

    specs = discover_or_exit(kw)
    if not specs:
        click.echo("No models found in " + ", ".join(kw["sources"]), err=True)
        sys.exit(ExitCode.NOTHING)
    out_dir = Path(out)
    (out_dir / "logs").mkdir(parents=True, exist_ok=True)
    options = convert_options_from(kw, specs)
    announce_isolation(options)
    n_workers = options.worker_count(len(specs))
    converter = Converter(options, log_dir=out_dir / "logs", n_workers=n_workers, runtimes=tuple(kw["runtime"]))
    started = time.monotonic()
    tty = sys.stdout.isatty()
    done = [0]

    def record(spec, result: dict) -> None:
        write_json_atomic(out_dir / f"{safe_name(spec.name)}.json", {"model": spec.to_dict(), **result})
        done[0] += 1
        _show(result, done[0], len(specs), started, tty)

    try:
        results = converter.convert_many(specs, out_dir, out_dir / "logs", on_result=record)
    except KeyboardInterrupt:
        click.echo("\ninterrupted; converted files so far are kept", err=True)
        sys.exit(ExitCode.STOPPED)
    finally:
        converter.close()
    if tty:
        click.echo()
    _table(results, time.monotonic() - started)


def _sampling(validation: dict) -> str:
    """How a model that draws at inference was validated (convert/worker/stochastic.py), in a few words."""
    sampling = validation.get("sampling")
    if not isinstance(sampling, dict):
        return ""
    draws = "artifact draws" if sampling.get("artifact_draws") else "draws fixed at their mean"
    if validation.get("method") != "distribution":
        return f"  (samples: {draws}; outputs do not vary, compared exactly)"
    figures = sampling.get("distribution") or {}
    at_mean = sampling.get("at_mean") or {}
    part = "deterministic part unchecked" if "unchecked" in at_mean else "deterministic part at the mean exact"
    return f"  (samples: {draws}; distribution over {figures.get('runs')} runs ok, {part})"


def _show(result: dict, n: int, total: int, started: float, tty: bool) -> None:
    name = result.get("model")
    if result.get("ok"):
        validation = result.get("validation") or {}
        strength = validation.get("strength", "")
        diff = result.get("max_abs_diff")
        line = f"converted {name}  " + (f"max|diff| {diff:.2e}" if isinstance(diff, (int, float)) else "max|diff| -") + \
            (f"  (check {strength})" if strength.startswith("weak") else "") + _sampling(validation) + \
            ("  (cached)" if result.get("cached") else "") + _work(result.get("compute_check")) + \
            _accuracy(result.get("accuracy"))
    elif result.get("stage") in ("filtered", "unsupported"):
        line = f"SKIPPED   {name}  {result.get('error_message')}"
    else:
        line = f"FAILED    {name}  " + error_text(result.get("stage"), result.get("error_type"), result.get("error_message"))
    line = printable(line)  # a model's name and message: nothing in them acts on the terminal
    elapsed = time.monotonic() - started
    eta = elapsed / n * (total - n) if n else None
    if tty:
        width = 24
        bar = "#" * int(width * n / total) + "-" * (width - int(width * n / total))
        click.echo(f"\r\x1b[2K[{n}/{total}] {line}")
        click.echo(f"[{bar}] {n}/{total}  ETA {fmt_duration(eta)}", nl=False)
    else:
        click.echo(f"[{n}/{total}] {line}")


def _work(check: dict | None) -> str:
    """The compute check in a few words: the artifact's multiply-accumulate work over PyTorch's."""
    if not check:
        return ""
    if check.get("ratio") is None:
        return "  work unmeasured"
    return f"  work {check['ratio']:.3f} of PyTorch's ({check['verdict']})"


def _accuracy(block: dict | None) -> str:
    """A derived precision's cost against PyTorch fp32, in one line."""
    if not block:
        return ""
    top1 = block.get("top1_agreement")
    return (f"  top-1 {'-' if top1 is None else f'{top1:.2f}'}  cos {block.get('cosine', 0):.5f}  "
            f"max rel err {block.get('max_abs_err_rel', 0):.2e}  accuracy {block.get('verdict')}")


def _table(results: list[dict], seconds: float) -> None:
    ok = [r for r in results if r.get("ok")]
    cached = sum(1 for r in ok if r.get("cached"))
    skips = ("filtered", "unsupported")
    failed = Counter(r.get("stage") for r in results if not r.get("ok") and r.get("stage") not in skips)
    skipped = Counter(r.get("stage") for r in results if not r.get("ok") and r.get("stage") in skips)
    click.echo(f"\n{'converted':<22}{len(ok) - cached:>6}")
    click.echo(f"{'cached':<22}{cached:>6}")
    for stage, count in sorted(failed.items()):
        click.echo(f"{'failed: ' + str(stage):<22}{count:>6}")
    for stage, count in sorted(skipped.items()):
        click.echo(f"{'skipped: ' + str(stage):<22}{count:>6}")
    click.echo(f"{'total':<22}{len(results):>6}   in {fmt_duration(seconds)}")
