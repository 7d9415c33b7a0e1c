"""Model discovery: source strings -> ModelSpec list. Never imports torch at module level.

A source is one of:
  - a LEMUR tree root (has `ab/nn/nn`): shapes and prm from the recorded trials (see lemur.LemurTree.choose);
  - a directory of LEMUR-format .py files (not recursive; files starting with "_" and files without a
    `class Net` are skipped): shape `in_shape` or the file's `DEFAULT_IN_SHAPE` or (1, 3, 32, 32),
    `num_classes` or 10 classes, prm from lemur.DEFAULT_PRM;
  - one .py file: as one file of a directory (or of its tree, if it sits in a tree's `ab/nn/nn`);
  - `path/to/file.py:factory` or `package.module:factory`: kind "factory", a callable returning
    (model, example_input); shapes come from the example input, in the worker.

A file that does not parse still yields a spec (kind "lemur", default shapes, origin starting with
"unparsed:"); building it raises the SyntaxError, which names the file and line, so the worker records
the failure for that model alone. Filtering by parameter count needs torch: the conversion
worker builds the model itself (convert/worker/model.py); discovery stays torch-free.
"""

from __future__ import annotations

import errno
import fnmatch
import importlib.machinery
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from nnlite_tui.core.sources import lemur
from nnlite_tui.core.sources.units import expand, parse_precisions
from nnlite_tui.core.spec import ModelSpec, sha256_file
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

DEFAULT_IN_SHAPE = (1, 3, 32, 32)
DEFAULT_NUM_CLASSES = 10
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
# A model's name becomes file names in the run (reports/<unit>__<serial>__<backend>.json, logs/,
# artifacts/), with suffixes up to ~100 bytes ("@dynamic-int8@executorch", an adb serial, ".corrupt"):
# a longer name could not make them on a file system whose names stop at 255 bytes.
MAX_NAME_BYTES = 150

Warn = Callable[[str], None]


class SourceError(ValueError):
    """A source the user gave cannot be used (missing path, bad spec string, bad option)."""


def discover(
    sources: Sequence[str],
    *,
    in_shape: Sequence[int] | None = None,
    num_classes: int | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    limit: int | None = None,
    dataset: str | None = None,
    warn: Warn | None = None,
    precisions: Sequence[str] = ("fp32",),
    runtimes: Sequence[str] = (DEFAULT_RUNTIME,),
) -> list[ModelSpec]:
    """Specs for every model in `sources`, in source order then file name order.

    in_shape / num_classes override what a source would pick. `dataset` restricts LEMUR trials to one
    dataset. Names are made unique ("name~2", "name~3" for later duplicates) before include/exclude
    (fnmatch globs on the name) and then `limit` apply. `warn` receives one line per skipped file.
    Each model then becomes one spec per runtime and precision (units.expand): `<name>` for LiteRT
    fp32, `<name>@<runtime>` and `@<precision>` suffixes for the others.
    """
    shape = _check_shape(in_shape)
    if num_classes is not None and (not isinstance(num_classes, int) or num_classes < 1):
        raise SourceError(f"num_classes must be a positive integer, got {num_classes!r}")
    if dataset is not None and dataset not in lemur.DATASETS:
        raise SourceError(f"unknown dataset {dataset!r}; known: {', '.join(sorted(lemur.DATASETS))}")
    if limit is not None and limit < 0:
        raise SourceError(f"limit must be >= 0, got {limit}")
    warn = warn or (lambda msg: None)
    specs: list[ModelSpec] = []
    for source in sources:
        specs.extend(_one_source(source, shape, num_classes, dataset, warn))
    specs = _unique_names(specs)
    include, exclude = tuple(include), tuple(exclude)
    specs = [
        s for s in specs
        if (not include or any(fnmatch.fnmatchcase(s.name, g) for g in include))
        and not any(fnmatch.fnmatchcase(s.name, g) for g in exclude)
    ]
    specs = specs if limit is None else specs[:limit]
    if tuple(precisions) == ("fp32",) and tuple(runtimes) == (DEFAULT_RUNTIME,):
        return specs
    return expand(specs, _check_precisions(precisions), _check_runtimes(runtimes))


def _check_precisions(precisions: Sequence[str]) -> tuple[str, ...]:
    try:
        return parse_precisions(precisions)
    except ValueError as exc:
        raise SourceError(str(exc)) from None


def _check_runtimes(runtimes: Sequence[str]) -> tuple[str, ...]:
    from nnlite_tui.core.runtimes import parse_runtimes

    try:
        return parse_runtimes(",".join(runtimes))
    except ValueError as exc:
        raise SourceError(str(exc)) from None


def _check_shape(in_shape: Sequence[int] | None) -> tuple[int, ...] | None:
    if in_shape is None:
        return None
    shape = tuple(in_shape)
    if len(shape) == 3:
        shape = (1, *shape)
    if len(shape) != 4 or not all(isinstance(v, int) and v > 0 for v in shape):
        raise SourceError(f"in_shape must be B,C,H,W (or C,H,W) positive integers, got {in_shape!r}")
    return shape


def _one_source(source: str, shape, num_classes, dataset, warn: Warn) -> list[ModelSpec]:
    path = Path(source).expanduser()
    if not path.exists() and ":" in source:
        return [_factory(source, shape, num_classes)]
    if not path.exists():
        raise SourceError(f"model source not found: {source}")
    path = path.resolve()
    if path.is_dir():
        if lemur.is_tree_root(path):
            return _tree(lemur.LemurTree(path, warn), None, shape, num_classes, dataset)
        if (root := _tree_of_nn_dir(path)) is not None:
            return _tree(lemur.LemurTree(root, warn), None, shape, num_classes, dataset)
        files = usable_model_files(path.glob("*.py"), warn)
        return [s for s in (_dir_file(p, shape, num_classes, warn) for p in files) if s is not None]
    if path.suffix != ".py":
        raise SourceError(f"not a directory or a .py file: {source}")
    problem = file_problem(path)
    if problem is not None:
        raise SourceError(f"{_shown(path)}: {problem}")
    if (root := _tree_of_nn_dir(path.parent)) is not None:
        return _tree(lemur.LemurTree(root, warn), [path], shape, num_classes, dataset)
    spec = _dir_file(path, shape, num_classes, warn, explicit=True)
    return [spec] if spec is not None else []


def usable_model_files(candidates: Iterable[Path], warn: Warn) -> list[Path]:
    """The model files among `candidates` (sorted, "_" files left out); every other entry is skipped
    with one warning naming it, so that one bad entry never stops discovery or the run."""
    out = []
    for p in sorted(candidates):
        if p.name.startswith("_"):
            continue
        problem = file_problem(p)
        if problem is None:
            out.append(p)
        else:
            warn(f"{_shown(p)}: skipped ({problem})")
    return out


def file_problem(path: Path) -> str | None:
    """Why `path` cannot be a model file (a name that cannot make the run's file names, a link to
    nothing or a loop, not a readable regular file), or None."""
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8; rename the file"
    if len(path.stem.encode("utf-8")) > MAX_NAME_BYTES:
        return (f"its name is {len(path.stem.encode('utf-8'))} bytes long, more than the {MAX_NAME_BYTES} "
                "a run can make file names from; rename the file")
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of symbolic links"
        if exc.errno == errno.ENOENT and path.is_symlink():
            return f"a symbolic link to nothing ({os.readlink(path)})"
        return exc.strerror or str(exc)
    if not path.is_file():
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "not readable (permission denied)"
    return None


def _hyperparameters_problem(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if re.search(r"^def supported_hyperparameters\b", text, re.MULTILINE) is None:
        return "no supported_hyperparameters()"
    return "supported_hyperparameters() not a literal"


def _may_define_net(path: Path) -> bool:
    """False only when the file certainly has no `Net`: the name appears nowhere, and no `import *`."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return re.search(r"\bNet\b", text) is not None or re.search(r"import\s+\*", text) is not None


def _shown(path: Path) -> str:
    """A path as text that any terminal and any UTF-8 file can take (undecodable bytes escaped)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _tree_of_nn_dir(path: Path) -> Path | None:
    """The tree root if `path` is a tree's `ab/nn/nn` directory (so its trials apply), else None."""
    if len(path.parents) < 3 or path.parts[-3:] != ("ab", "nn", "nn"):
        return None
    return path.parents[2]


def _dir_file(path: Path, shape, num_classes, warn: Warn, explicit: bool = False) -> ModelSpec | None:
    try:
        mf = lemur.read_model_file(path)
    except OSError as exc:  # removed or made unreadable since it was listed
        warn(f"{_shown(path)}: skipped ({exc.strerror or exc})")
        return None
    if mf.error is not None:
        warn(f"{path}: {mf.error}")
        return _unparsed(mf, shape, num_classes)
    if not mf.has_net and not explicit:
        warn(f"{path}: skipped (no class Net)")
        return None
    if not mf.has_net and not _may_define_net(path):
        raise SourceError(f"{_shown(path)}: no class Net (a LEMUR model file defines `class Net(nn.Module)`)")
    notes = []
    in_shape = shape or mf.default_in_shape or DEFAULT_IN_SHAPE
    if shape is None:
        notes.append("in_shape from the file's DEFAULT_IN_SHAPE" if mf.default_in_shape else f"default in_shape {DEFAULT_IN_SHAPE}")
    if num_classes is None:
        notes.append(f"default {DEFAULT_NUM_CLASSES} classes")
    prm, defaulted = lemur.fill_prm(mf.hyperparameters, {})
    if mf.hyperparameters is None:  # said, not only noted in the report: the model gets guessed values
        warn(f"{_shown(path)}: {_hyperparameters_problem(path)}; built with prm {prm}")
    return ModelSpec(
        name=path.stem, kind="lemur", file=str(path), sha256=mf.sha256, in_shape=tuple(in_shape),
        out_shape=(num_classes or DEFAULT_NUM_CLASSES,), prm=prm,
        origin="; ".join(["directory", *notes, _defaulted_note(mf, defaulted)]),
    )


def _unparsed(mf: lemur.ModelFile, shape, num_classes) -> ModelSpec:
    return ModelSpec(
        name=mf.path.stem, kind="lemur", file=str(mf.path), sha256=mf.sha256, in_shape=shape or DEFAULT_IN_SHAPE,
        out_shape=(num_classes or DEFAULT_NUM_CLASSES,), prm={}, origin=f"unparsed: {mf.error}",
    )


def _defaulted_note(mf: lemur.ModelFile, defaulted: list[str]) -> str:
    if mf.hyperparameters is None:
        return f"{_hyperparameters_problem(mf.path)}; prm defaulted: {', '.join(defaulted)}"
    return f"prm defaulted: {', '.join(defaulted)}" if defaulted else "prm from trial"


def _tree(tree: lemur.LemurTree, files, shape, num_classes, dataset) -> list[ModelSpec]:
    out = []
    for path in files if files is not None else usable_model_files(tree.model_files(), tree.warn):
        try:
            mf = lemur.read_model_file(path)
        except OSError as exc:
            tree.warn(f"{_shown(path)}: skipped ({exc.strerror or exc})")
            continue
        if mf.error is not None:
            tree.warn(f"{path}: {mf.error}")
            out.append(_unparsed(mf, shape, num_classes))
        elif not mf.has_net and not _may_define_net(path):
            tree.warn(f"{_shown(path)}: skipped (no class Net)")
        else:
            out.append(_tree_spec(tree, mf, shape, num_classes, dataset))
    return out


def _tree_spec(tree: lemur.LemurTree, mf: lemur.ModelFile, shape, num_classes, dataset) -> ModelSpec:
    common = dict(name=mf.path.stem, kind="lemur", file=str(mf.path), sha256=mf.sha256)
    choice = tree.choose(mf.path.stem, dataset)
    if choice is None:
        prm, defaulted = lemur.fill_prm(mf.hyperparameters, {})
        where = f"no {dataset} trials" if dataset else "no trials"
        family = () if shape else tree.family_sizes(mf.path.stem, DEFAULT_IN_SHAPE[1], DEFAULT_IN_SHAPE[2:])
        return ModelSpec(
            **common, in_shape=shape or DEFAULT_IN_SHAPE, out_shape=(num_classes or DEFAULT_NUM_CLASSES,), prm=prm,
            origin=f"lemur: {where}, defaults used; {_defaulted_note(mf, defaulted)}",
            alt_in_shapes=tuple((1, *a) for a in family),
        )
    t, geo = choice.trial, choice.geometry
    transform = t.values.get("transform")
    notes = [
        f"lemur trial {t.values.get('uid')} ({t.task}/{t.dataset}, transform {transform}, epoch {t.epoch}, "
        f"accuracy {t.values.get('accuracy')}), first of {choice.candidates} trials by task, known size, "
        "success, dataset, accuracy",
    ]
    ds = lemur.DATASETS.get(t.dataset)
    if ds is None and t.task not in lemur.TEXT_TASKS:
        notes.append(f"unknown dataset {t.dataset}: {geo.channels} channels, {DEFAULT_NUM_CLASSES} classes assumed")
    hw = geo.hw or DEFAULT_IN_SHAPE[2:]
    if geo.hw is None and t.task not in lemur.TEXT_TASKS:
        notes.append(f"input size unknown ({geo.note}), used {hw[0]}x{hw[1]}")
        if shape is None:
            tree.warn(f"{_shown(mf.path)}: input size unknown ({geo.note}, transform {transform}); "
                      f"converting at {hw[0]}x{hw[1]}")
    if shape is not None:
        notes.append("in_shape given by the user")
    if num_classes is not None:
        notes.append("num_classes given by the user")
    extra = tuple(k for k in t.values if k not in lemur.TRIAL_RESULT_KEYS)
    prm, defaulted = lemur.fill_prm(mf.hyperparameters, {"epoch": t.epoch, **t.values}, extra)
    notes.append(_defaulted_note(mf, defaulted))
    in_shape, out_shape = _task_shapes(t, geo, hw, ds, notes)
    alternatives = () if shape is not None else tuple((1, *a) for a in choice.alternatives)
    return ModelSpec(
        **common, in_shape=tuple(shape or in_shape), out_shape=(num_classes,) if num_classes else out_shape,
        prm=prm, task=t.task, dataset=t.dataset, transform=transform if isinstance(transform, str) else None,
        origin="; ".join(notes), alt_in_shapes=alternatives,
    )


def _task_shapes(t: lemur.Trial, geo, hw, ds, notes: list[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """in_shape and out_shape as LEMUR's loader for the trial's task would pass them to Net."""
    from nnlite_tui.core.sources.task_inputs import TEXT_TOKENS  # torch-free module

    image = (1, geo.channels, *hw)
    if t.task in ("img-captioning", *lemur.TEXT_TASKS):
        vocab = t.values.get("vocab_size")
        if not (isinstance(vocab, int) and vocab > 1):
            vocab = lemur.VOCAB.get(t.dataset, lemur.DEFAULT_VOCAB)
            notes.append(f"vocabulary of {vocab} tokens assumed for {t.dataset} (not recorded in the trial)")
        return (image if t.task == "img-captioning" else (1, TEXT_TOKENS)), (vocab,)
    if t.task in ("txt-image", "text-to-image"):
        # LEMUR's training passes Net the shape of the first batch's input, the images (Train.py), and
        # the generated image as out_shape: its models read in_shape[1:] as channels and size.
        return image, (3, *hw)
    return image, ((ds.classes if ds else DEFAULT_NUM_CLASSES),)


def _factory(source: str, shape, num_classes) -> ModelSpec:
    target, _, factory = source.rpartition(":")
    if not _IDENT.match(factory):
        raise SourceError(f"bad factory name {factory!r} in {source!r} (expected path/file.py:name or module:name)")

    def spec(name: str, file: str | None, sha256: str, module: str | None = None) -> ModelSpec:
        return ModelSpec(name=name, kind="factory", file=file, sha256=sha256, module=module, factory=factory,
                         in_shape=shape or DEFAULT_IN_SHAPE, out_shape=(num_classes or DEFAULT_NUM_CLASSES,),
                         origin="factory: shapes come from the factory's example input")

    if target.endswith(".py"):
        path = Path(target).expanduser()
        if not path.is_file():
            raise SourceError(f"model source not found: {target} (in {source!r})")
        path = path.resolve()
        return spec(f"{path.stem}.{factory}", str(path), sha256_file(str(path)))
    if not _DOTTED.match(target):
        raise SourceError(f"model source not found: {source} (not a path, and not module:factory)")
    file = _module_file(target)
    if file is None:
        raise SourceError(f"module not found: {target} (in {source!r})")
    # file stays None so the worker imports the module by name (its relative imports keep working).
    return spec(f"{target}.{factory}", None, sha256_file(file), module=target)


def _module_file(module: str) -> str | None:
    """The module's source file, found on sys.path without importing it or its packages."""
    search: list[str] | None = None
    spec = None
    parts = module.split(".")
    for i in range(len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: i + 1]), search)
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    return spec.origin if spec is not None and spec.origin and Path(spec.origin).is_file() else None


def _unique_names(specs: list[ModelSpec]) -> list[ModelSpec]:
    """The first spec with a name keeps it; later ones get "name~2", "~3"... (never an existing name)."""
    originals = {s.name for s in specs}
    used: set[str] = set()
    out = []
    for s in specs:
        name = s.name
        if name in used:
            n = 2
            while f"{s.name}~{n}" in used or f"{s.name}~{n}" in originals:
                n += 1
            name = f"{s.name}~{n}"
        used.add(name)
        out.append(s if name == s.name else _replace(s, name=name))
    return out


def _replace(spec: ModelSpec, **changes: Any) -> ModelSpec:
    return ModelSpec.from_dict({**spec.to_dict(), **changes})

