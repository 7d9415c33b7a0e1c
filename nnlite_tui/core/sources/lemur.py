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
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nnlite_tui.core.sources.datasets import DATASETS
from nnlite_tui.core.sources.python_source import parse_source
from nnlite_tui.core.sources.lemur_transform import Geometry, apply_transform, literal, parse_transform


_DATASET_RANK = {name: i for i, name in enumerate(DATASETS)}

PREFERRED_TASK = "img-classification"
# Tasks whose input is token ids only (no image, so no transform geometry).
TEXT_TASKS = frozenset({"txt-generation"})
# Vocabulary sizes, for tasks whose out_shape is a vocabulary. The tree does not record them (LEMUR's
# loaders build the vocabulary from the data): COCO captions at LEMUR's threshold give ~10k words,
# WikiText-2 has 33,278.
VOCAB: dict[str, int] = {"coco": 10000, "wikitext": 33278}
DEFAULT_VOCAB = 10000


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
    tree = parse_source(path, data)
    if isinstance(tree, str):
        return ModelFile(path, sha, error=tree)
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
        names = [e.value for e in elts or () if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if elts is None or len(names) != len(elts):
            return None
        return tuple(sorted(set(names)))
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
    values: dict[str, object] = field(hash=False)  # the trial as LEMUR's stat file has it

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
DEFAULT_PRM: dict[str, object] = {
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


def default_value(name: str) -> object:
    if name in DEFAULT_PRM:
        return DEFAULT_PRM[name]
    return FALLBACK_DROP if "drop" in name else FALLBACK_OTHER


def fill_prm(
    names: tuple[str, ...] | None, known: Mapping[str, object], extra: tuple[str, ...] = ()
) -> tuple[dict[str, object], list[str]]:
    """prm for the declared names, COMMON_NAMES and `extra`, from `known` where present, else defaults.
    Returns (prm, names that were defaulted)."""
    prm: dict[str, object] = {}
    defaulted: list[str] = []
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


_FAMILY_SUFFIX = re.compile(r"-([0-9a-f]{32}|\d+)$")


@dataclass(frozen=True)
class Choice:
    trial: Trial
    geometry: Geometry
    candidates: int
    # (channels, H, W) of the model's other successful trials at larger sizes, smallest first.
    alternatives: tuple[tuple[int, int, int], ...] = ()


def succeeded(t: Trial) -> bool:
    """The trial learned something: above chance for classification, a positive score otherwise."""
    ds = DATASETS.get(t.dataset)
    chance = 1.0 / ds.classes if ds is not None and t.task == PREFERRED_TASK else 0.0
    return t.accuracy > chance


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
        self._tree_sizes: tuple[tuple[int, int, int], ...] | None = None
        # Read once per tree: a full LEMUR release has ~10,500 models and ~100,000 trial files, and the
        # family fallback asks for the same members' trials again for every model of a family.
        self._files: list[Path] | None = None
        self._trials: dict[str, list[Trial]] = {}
        self._families: dict[str, list[str]] | None = None
        self._family_counts: dict[tuple[str, int], Counter[tuple[int, int, int]]] = {}
        self._sizes_of: dict[tuple[str, int], frozenset[tuple[int, int, int]]] = {}

    def model_files(self) -> list[Path]:
        if self._files is None:
            self._files = sorted(p for p in self.nn_dir.glob("*.py") if not p.name.startswith("_"))
        return list(self._files)

    def trials(self, nn: str) -> list[Trial]:
        if nn not in self._trials:
            self._trials[nn] = self._read_trials(nn)
        return self._trials[nn]

    def _read_trials(self, nn: str) -> list[Trial]:
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

    def geometry(self, transform: object, dataset: str) -> Geometry:
        ds = DATASETS[dataset]
        if not isinstance(transform, str) or not transform:
            return Geometry(None, ds.channels, "trial names no transform")
        if transform not in self._transforms:
            path = self.transform_dir / f"{transform}.py"
            parsed = parse_transform(path) if path.is_file() else f"no file {path.name}"
            if isinstance(parsed, str):  # said once, naming the file: the trials using it have no known size
                self.warn(f"{path}: the transform cannot be read ({parsed}); the input size of the trials "
                          f"that use it is unknown")
            self._transforms[transform] = parsed
        return apply_transform(self._transforms[transform], ds)

    def family_sizes(self, nn: str, channels: int, hw: tuple[int, int]) -> tuple[tuple[int, int, int], ...]:
        """For a model without trials: the larger image-classification sizes that the successful trials
        of its family (the same name without the trailing hash or number) used, smallest first; if the
        family has none, the next larger size any model of the tree learned at."""
        family = _FAMILY_SUFFIX.sub("", nn)
        if self._families is None:
            self._families = {}
            for p in self.model_files():
                self._families.setdefault(_FAMILY_SUFFIX.sub("", p.stem), []).append(p.stem)
        # How many members learned at each size, counted once per family: a family of thousands (ga-*)
        # would otherwise be walked again for each of its members.
        fkey = (family, channels)
        if fkey not in self._family_counts:
            self._family_counts[fkey] = Counter(s for m in self._families.get(family, [])
                                                for s in self._member_sizes(m, channels))
        own = self._member_sizes(nn, channels) if nn in self._families.get(family, ()) else frozenset()
        counts = self._family_counts[fkey]
        sizes = _larger(tuple(s for s, n in counts.items() if n - (s in own) > 0), hw)
        if not sizes:
            if self._tree_sizes is None:
                self._tree_sizes = _larger(tuple({s for p in self.model_files()
                                                  for s in self._member_sizes(p.stem, channels)}), (0, 0))
            sizes = tuple(s for s in self._tree_sizes if s[1] * s[2] > hw[0] * hw[1])[:1]
        return sizes

    def _member_sizes(self, name: str, channels: int) -> frozenset[tuple[int, int, int]]:
        """The (channels, H, W) at which one model's image-classification trials succeeded."""
        key = (name, channels)
        if key not in self._sizes_of:
            sizes = set()
            for t in self.trials(name):
                if t.task == PREFERRED_TASK and t.dataset in DATASETS and succeeded(t):
                    g = self.geometry(t.values.get("transform"), t.dataset)
                    if g.hw is not None and g.channels == channels:
                        sizes.add((channels, *g.hw))
            self._sizes_of[key] = frozenset(sizes)
        return self._sizes_of[key]

    def choose(self, nn: str, dataset: str | None = None) -> Choice | None:
        """The trial whose configuration is converted: the input size comes from the model's own
        successful trials, not from the smallest size any trial used (a mutation that failed at 32x32
        says nothing about the model). Ranked by: image classification first, known dataset and size,
        trial succeeded, dataset order of DATASETS, best accuracy, then lowest epoch, transform and uid
        so that the pick is deterministic."""
        rows = []
        for t in self.trials(nn):
            if dataset is not None and t.dataset != dataset:
                continue
            text = t.task in TEXT_TASKS
            known = t.dataset in DATASETS or text
            if text:
                geo = Geometry(None, 0, "token ids")
            elif t.dataset in DATASETS:
                geo = self.geometry(t.values.get("transform"), t.dataset)
            else:
                geo = Geometry(None, 3, "unknown dataset")
            key = (t.task != PREFERRED_TASK, not known, geo.hw is None and not text, not succeeded(t),
                   _DATASET_RANK.get(t.dataset, 99), -t.accuracy, t.epoch,
                   str(t.values.get("transform")), str(t.values.get("uid")))
            rows.append((key, t, geo))
        if not rows:
            return None
        rows.sort(key=lambda r: r[0])
        best, geo = _most_common_size(rows)
        return Choice(best, geo, len(rows), _alternatives(best, geo, rows))


def _larger(sizes: tuple[tuple[int, int, int], ...], hw: tuple[int, int]) -> tuple[tuple[int, int, int], ...]:
    """The sizes above `hw` in area, smallest first."""
    return tuple(sorted((s for s in sizes if s[1] * s[2] > hw[0] * hw[1]), key=lambda s: (s[1] * s[2], s)))


def _group(best: Trial, rows, channels: int):
    """The rows of best's task and dataset with a known size, successful ones if best succeeded."""
    return [(t, g) for _, t, g in rows
            if t.task == best.task and t.dataset == best.dataset and g.hw is not None
            and g.channels == channels and (succeeded(t) or not succeeded(best))]


def _most_common_size(rows) -> tuple[Trial, Geometry]:
    """Among the first-ranked trial's task and dataset: the size its successful trials used most
    (ties: the one with the best accuracy), and the best trial at that size."""
    _, first, geo = rows[0]
    group = _group(first, rows, geo.channels)
    if geo.hw is None or not group:
        return first, geo
    counts: dict[tuple[int, int], int] = {}
    for _, g in group:
        counts[g.hw] = counts.get(g.hw, 0) + 1
    # rows are sorted by accuracy within the group, so the first trial at a size is its best
    best_at: dict[tuple[int, int], tuple[Trial, Geometry]] = {}
    for t, g in group:
        best_at.setdefault(g.hw, (t, g))
    hw = min(counts, key=lambda s: (-counts[s], -best_at[s][0].accuracy, s[0] * s[1]))
    return best_at[hw]


def _alternatives(best: Trial, geo: Geometry, rows) -> tuple[tuple[int, int, int], ...]:
    if geo.hw is None:
        return ()
    area = geo.hw[0] * geo.hw[1]
    sizes = {(g.channels, *g.hw) for _, g in _group(best, rows, geo.channels) if g.hw[0] * g.hw[1] > area}
    return tuple(sorted(sizes, key=lambda s: (s[1] * s[2], s)))
