"""What model code may read besides the system and the Python environment: its sources and the caches
of checkpoints it may load offline.

A model file's directory is visible (LEMUR-format files import their siblings), unless that directory
is the user's home or above it: then only the file. A `module:factory` model's top-level package (or
module file) is visible and its sys.path entry goes on the worker's PYTHONPATH, so that it imports by
name as here. Checkpoint caches (torch hub, Hugging Face's hub cache; never the Hugging Face token
next to it) are read-only, with the variables that point torch and Hugging Face at them; only
torch hub's checkpoints directory, so that torch.hub's own directories can still be made in scratch
when it is not there.
"""

from __future__ import annotations

import importlib.machinery
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.sources import lemur_package
from nnlite_tui.core.spec import ModelSpec


@dataclass(frozen=True)
class Sources:
    read_only: tuple[Path, ...] = ()
    python_path: tuple[Path, ...] = ()  # sys.path entries of module:factory models

    def covers(self, other: Sources) -> bool:
        return all(_inside(p, self.read_only) for p in other.read_only) and set(other.python_path) <= set(
            self.python_path)

    def union(self, other: Sources) -> Sources:
        return Sources(tuple(dict.fromkeys((*self.read_only, *other.read_only))),
                       tuple(dict.fromkeys((*self.python_path, *other.python_path))))


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _home() -> Path | None:
    home = os.environ.get("HOME")
    return Path(home).resolve() if home else None


def _file_root(file: Path) -> Path:
    home = _home()
    folder = file.parent
    if home is not None and (folder == home or folder in home.parents):
        return file  # a model in the home directory (or above it) shows only itself
    return folder


def _module_root(module: str) -> tuple[Path, Path] | None:
    """(what to show, the sys.path entry it was found in) for `module`, found as discovery finds it."""
    top = module.split(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        shown = Path(list(spec.submodule_search_locations)[0])
    elif spec.origin:
        shown = Path(spec.origin)
    else:
        return None
    shown = Path(os.path.abspath(shown))
    return shown, shown.parent


def source_roots(specs: Iterable[ModelSpec]) -> Sources:
    read_only: dict[Path, None] = {}
    python_path: dict[Path, None] = {}
    for spec in specs:
        if spec.file:
            read_only[_file_root(Path(os.path.abspath(spec.file)))] = None
            checkout = lemur_package.checkout_root(spec.file)
            if checkout is not None:  # the models of a LEMUR checkout may import its `ab` package
                read_only[checkout / lemur_package.PACKAGE] = None
        elif spec.module:
            found = _module_root(spec.module)
            if found is not None:
                read_only[found[0]] = None
                python_path[found[1]] = None
    return Sources(tuple(read_only), tuple(python_path))


def from_options(options) -> Sources:
    """The sources a run announced (ConvertOptions.sandbox_sources and sandbox_python_path)."""
    return Sources(tuple(Path(os.path.abspath(p)) for p in options.sandbox_sources),
                   tuple(Path(os.path.abspath(p)) for p in options.sandbox_python_path))


def checkpoint_caches() -> tuple[tuple[Path, ...], dict[str, str]]:
    """(read-only directories, environment inside) for the checkpoint caches that exist here."""
    env = os.environ
    home = env.get("HOME", "")
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    torch_home = Path(env.get("TORCH_HOME") or os.path.join(xdg, "torch"))
    hf_hub = Path(env.get("HF_HUB_CACHE") or os.path.join(env.get("HF_HOME") or os.path.join(xdg, "huggingface"),
                                                          "hub"))
    paths, inner = [], {}
    checkpoints = torch_home / "hub" / "checkpoints"  # what load_state_dict_from_url reads
    if checkpoints.is_dir():
        paths.append(checkpoints.resolve())
        inner["TORCH_HOME"] = str(torch_home.resolve())
    if hf_hub.is_dir():
        paths.append(hf_hub.resolve())
        inner["HF_HUB_CACHE"] = str(hf_hub.resolve())
    return tuple(paths), inner


MAX_DOTTED = 200  # per source folder: a folder of thousands of dotfiles shows the rest


def dotted(roots: Iterable[Path]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(directories, files) named with a leading dot at the top of each source folder: a `.env`, a
    `.git` or a `.netrc` beside a model holds secrets, not model code; they are shown empty."""
    dirs: list[Path] = []
    files: list[Path] = []
    for root in roots:
        if not root.is_dir():
            continue
        try:
            entries = [e for e in os.scandir(root) if e.name.startswith(".")][:MAX_DOTTED]
        except OSError:
            continue
        for entry in entries:
            path = Path(os.path.abspath(entry.path))
            if entry.is_dir(follow_symlinks=False):
                dirs.append(path)
            elif entry.is_file(follow_symlinks=False):
                files.append(path)
    return tuple(dirs), tuple(files)
