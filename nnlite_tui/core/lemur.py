"""Reading LEMUR model files and trees with `ast` and `json` only (no torch, no imports of model code).

A LEMUR tree (ABrain-One/nn-dataset layout) holds `ab/nn/nn/<nn>.py` models, their training trials in
`ab/nn/stat/train/<task>_<dataset>_<metric>_<nn>/<epoch>.json` and the transforms those trials name in
`ab/nn/transform/<transform>.py`. The trials tell the dataset (so channels and classes) and the
transform tells the input size.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nnlite_tui.core.lemur_transform import Geometry, apply_transform, literal, parse_transform


@dataclass(frozen=True)
class Dataset:
    channels: int
    classes: int
    native_hw: tuple[int, int] | None  # None: images vary in size, so only a sizing transform fixes it


# Class counts of the LEMUR datasets (nn-dataset). CelebA and Imagenette images are not one fixed size and the
# loaders' native size for Places365 is not recorded in the tree, so a trial on them whose transform does
# not set a size is treated as "size unknown" and ranked last. The order is the tie-break between
# datasets at equal input size (accuracies of different datasets are not comparable): the common
# benchmarks first.
DATASETS: dict[str, Dataset] = {
    "cifar-10": Dataset(3, 10, (32, 32)),
    "mnist": Dataset(1, 10, (28, 28)),
    "svhn": Dataset(3, 10, (32, 32)),
    "cifar-100": Dataset(3, 100, (32, 32)),
    "imagenette": Dataset(3, 10, None),
    "celeba-gender": Dataset(3, 2, None),
    "places365": Dataset(3, 365, None),
}
_DATASET_RANK = {name: i for i, name in enumerate(DATASETS)}

PREFERRED_TASK = "img-classification"


@dataclass(frozen=True)
class ModelFile:
    """What `ast` tells about one model file. `error` is set (and the rest defaulted) if it does not parse."""

    path: Path
    sha256: str
    hyperparameters: tuple[str, ...] | None = None  # None: not a literal we could read
    default_in_shape: tuple[int, ...] | None = None
    has_net: bool = False
    error: str | None = None


def read_model_file(path: Path) -> ModelFile:
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    try:
        tree = ast.parse(data, filename=str(path))
    except (SyntaxError, ValueError) as e:  # ValueError: source contains NUL bytes
        line = getattr(e, "lineno", None)
        where = f"{path.name}:{line}" if line else path.name
        msg = getattr(e, "msg", None) or str(e)
        return ModelFile(path, sha, error=f"{type(e).__name__} at {where}: {msg}")
    hp, shape, has_net = None, None, False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "supported_hyperparameters":
            hp = _returned_names(node)
        elif isinstance(node, ast.ClassDef) and node.name == "Net":
            has_net = True
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DEFAULT_IN_SHAPE" for t in node.targets
        ):
            shape = _literal_shape(node.value)
    return ModelFile(path, sha, hp, shape, has_net)


def _returned_names(fn: ast.FunctionDef) -> tuple[str, ...] | None:
    """Names in `return {'lr', ...}` / `[...]` / `(...)` / `set([...])` / `{'lr': ...}` (dict keys)."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Return) and node.value is not None):
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("set", "frozenset"):
            value = value.args[0] if len(value.args) == 1 else ast.Set(elts=[])
        elts = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", None)
        if elts is None or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
            return None
        return tuple(sorted({e.value for e in elts}))
    return None


def _literal_shape(node: ast.expr) -> tuple[int, ...] | None:
    value = literal(node)
    if isinstance(value, (tuple, list)) and len(value) == 4 and all(isinstance(v, int) and v > 0 for v in value):
        return tuple(value)
    return None


# --- trials -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    task: str
    dataset: str
    metric: str
    epoch: int
    values: dict[str, Any] = field(hash=False)

    @property
    def accuracy(self) -> float:
        acc = self.values.get("accuracy")
        return float(acc) if isinstance(acc, (int, float)) and math.isfinite(acc) else -1.0


def split_stat_dir(name: str) -> tuple[str, str, str, str] | None:
    """`<task>_<dataset>_<metric>_<nn>`; task, dataset and metric have no '_', the nn name may."""
    parts = name.split("_", 3)
    return (parts[0], parts[1], parts[2], parts[3]) if len(parts) == 4 and all(parts) else None


def read_trials(stat_dir: Path, task: str, dataset: str, metric: str, warn) -> list[Trial]:
    trials = []
    for f in sorted(stat_dir.glob("*.json")):
        try:
            epoch = int(f.stem)
            data = json.loads(f.read_bytes())
        except (ValueError, OSError) as e:  # JSONDecodeError is a ValueError; a non-numeric stem too
            warn(f"{f}: skipped ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
            continue
        if not isinstance(data, list):
            warn(f"{f}: skipped (expected a list of trials, got {type(data).__name__})")
            continue
        for t in data:
            # `epoch` in a trial (a few have it) is the model's own hyperparameter, which can differ from
            # the file's epoch (the number of epochs trained when the accuracy was recorded).
            if isinstance(t, dict):
                trials.append(Trial(task, dataset, metric, epoch, t))
    return trials


# --- hyperparameter values --------------------------------------------------------------------------

# Used when a value is unknown (directory sources, or a key a trial lacks). `pretrained` is 0 because the
# weights are random unless a checkpoint is given; `batch` is 1 to match the inference batch.
DEFAULT_PRM: dict[str, Any] = {
    "lr": 0.01, "momentum": 0.9, "dropout": 0.2, "batch": 1, "epoch": 1, "transform": "norm", "pretrained": 0,
}
# Any other name: 0.2 if it looks like a drop rate, else 0.5 (LEMUR's tuner samples most hyperparameters
# in [0, 1], and models scale them from there).
FALLBACK_DROP, FALLBACK_OTHER = 0.2, 0.5
# LEMUR trials always record these, and LEMUR passes the trial's values to Net, so some models read them
# without declaring them (alt-b35b729... uses prm['dropout']): every prm gets them.
COMMON_NAMES = ("dropout", "lr", "momentum")
# Trial fields that are results or bookkeeping, not hyperparameters passed to the model.
TRIAL_RESULT_KEYS = frozenset({"accuracy", "duration", "uid"})


def default_value(name: str) -> Any:
    if name in DEFAULT_PRM:
        return DEFAULT_PRM[name]
    return FALLBACK_DROP if "drop" in name else FALLBACK_OTHER


def fill_prm(
    names: tuple[str, ...] | None, known: dict[str, Any], extra: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    """prm for the declared names, COMMON_NAMES and `extra`, from `known` where present, else defaults.
    Returns (prm, names that were defaulted)."""
    prm, defaulted = {}, []
    for name in sorted(set(names or ()) | set(COMMON_NAMES) | set(extra)):
        if name in known and known[name] is not None:
            prm[name] = known[name]
        else:
            prm[name] = default_value(name)
            defaulted.append(name)
    return prm, defaulted


# --- a whole tree -----------------------------------------------------------------------------------


def is_tree_root(path: Path) -> bool:
    return (path / "ab" / "nn" / "nn").is_dir()


@dataclass(frozen=True)
class Choice:
    trial: Trial
    geometry: Geometry
    candidates: int


class LemurTree:
    """One tree, read lazily; transforms and the stat directory index are cached for the run."""

    def __init__(self, root: Path, warn=lambda msg: None):
        self.root = root
        self.nn_dir = root / "ab" / "nn" / "nn"
        self.stat_dir = root / "ab" / "nn" / "stat" / "train"
        self.transform_dir = root / "ab" / "nn" / "transform"
        self.warn = warn
        self._index: dict[str, list[tuple[Path, str, str, str]]] | None = None
        self._transforms: dict[str, list | str] = {}

    def model_files(self) -> list[Path]:
        return sorted(p for p in self.nn_dir.glob("*.py") if not p.name.startswith("_"))

    def trials(self, nn: str) -> list[Trial]:
        if self._index is None:
            self._index = {}
            entries = sorted(self.stat_dir.iterdir()) if self.stat_dir.is_dir() else []
            for d in entries:
                parts = split_stat_dir(d.name)
                if parts and d.is_dir():
                    self._index.setdefault(parts[3], []).append((d, *parts[:3]))
        out = []
        for d, task, dataset, metric in self._index.get(nn, []):
            out.extend(read_trials(d, task, dataset, metric, self.warn))
        return out

    def geometry(self, transform: Any, dataset: str) -> Geometry:
        ds = DATASETS[dataset]
        if not isinstance(transform, str) or not transform:
            return Geometry(None, ds.channels, "trial names no transform")
        if transform not in self._transforms:
            path = self.transform_dir / f"{transform}.py"
            self._transforms[transform] = parse_transform(path) if path.is_file() else f"no file {path.name}"
        return apply_transform(self._transforms[transform], ds)

    def choose(self, nn: str, dataset: str | None = None) -> Choice | None:
        """The most mobile-friendly recorded config. Ranked by: image classification first, known dataset,
        smallest known input area (H*W), dataset order of DATASETS, best accuracy, then lowest epoch,
        transform and uid so that the pick is deterministic."""
        ranked = []
        for t in self.trials(nn):
            if dataset is not None and t.dataset != dataset:
                continue
            known = t.dataset in DATASETS
            geo = self.geometry(t.values.get("transform"), t.dataset) if known else Geometry(None, 3, "unknown dataset")
            area = geo.hw[0] * geo.hw[1] if geo.hw else math.inf
            key = (t.task != PREFERRED_TASK, not known, area, _DATASET_RANK.get(t.dataset, 99), -t.accuracy, t.epoch,
                   str(t.values.get("transform")), str(t.values.get("uid")))
            ranked.append((key, t, geo))
        if not ranked:
            return None
        ranked.sort(key=lambda r: r[0])
        return Choice(ranked[0][1], ranked[0][2], len(ranked))
