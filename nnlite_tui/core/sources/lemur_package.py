"""LEMUR's own Python package, `ab` (nn-dataset): some LEMUR models import it (a vocabulary, a loader).

A model file inside a full LEMUR checkout (`<root>/ab/__init__.py`, the models in `<root>/ab/nn/nn/`)
imports it from that checkout; a model of a tree cut out of LEMUR (only `ab/nn/nn/` and its trials)
cannot, and says what to do instead of Python's bare "No module named 'ab'".
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = "ab"
MISSING = ("the model imports LEMUR's package (nn-dataset, module '{name}'): point nnlite at a full LEMUR "
           "checkout (the models under its ab/nn/nn/, beside ab/__init__.py) or install nn-dataset")


def checkout_root(model_file: str | Path) -> Path | None:
    """The directory holding the `ab` package of the LEMUR checkout a model file is in, if it is in one."""
    for parent in Path(model_file).resolve().parents:
        if parent.name == PACKAGE and (parent / "__init__.py").is_file():
            return parent.parent
    return None


def is_lemur_package(module_name: str | None) -> bool:
    return bool(module_name and module_name.split(".")[0] == PACKAGE)
