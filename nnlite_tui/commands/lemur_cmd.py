"""`nnlite lemur fetch`: the LEMUR corpus from its PyPI release, as a tree `nnlite run` reads (no torch import)."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def lemur() -> None:
    """The LEMUR dataset of models: get it as a tree nnlite reads."""


@lemur.command()
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--version", "version", default=None, metavar="V",
              help="The nn-dataset release (default 2.1.2, the last that ships model files).")
@click.option("--sample", type=int, default=None, metavar="N",
              help="Keep N models drawn at random (with their trials); the same --seed gives the same slice.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample's draw.")
@click.option("--wheel", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Unpack this nn-dataset wheel instead of downloading one.")
@click.option("--find-links", default=None, metavar="DIR|URL",
              help="Have pip look only here for the wheel (an offline mirror), not the index.")
def fetch(dest: Path, version: str | None, sample: int | None, seed: int, wheel: Path | None,
          find_links: str | None) -> None:
    """Download nn-dataset with pip, verify every file against the wheel's RECORD and unpack
    ab/nn/{nn,stat,transform,...} and LEMUR's package into DEST/ab.

    `nnlite run DEST` then reads it (models that import LEMUR's package find it there, in the sandbox too).
    """
    from nnlite_tui.core.sources.lemur_fetch import DEFAULT_VERSION, LemurFetchError
    from nnlite_tui.core.sources.lemur_fetch import fetch as do_fetch

    try:
        result = do_fetch(dest, version or DEFAULT_VERSION, sample, seed, wheel, find_links)
    except LemurFetchError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or dest}: {exc.strerror or exc}") from None
    slice_ = (f" (a sample of {result.models} of {result.models_in_release}, seed {result.seed})"
              if result.sample is not None else "")
    click.echo(f"nn-dataset {result.version}: {result.models} models{slice_} in {dest / 'ab'}; "
               f"{result.with_trials} with training trials; {result.files_verified} files verified "
               f"against the wheel's RECORD (wheel sha256 {result.wheel_sha256[:16]}...)")
