"""Fixtures shared by the whole suite: fixture model folders and an isolated conversion cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
LEMUR_TREE = FIXTURES / "lemur"  # ten real LEMUR models with their trials and transforms
# A unit's rounds 50 ms apart instead of a second (the product's default): the suite's models take
# milliseconds, and its runs would otherwise wait seconds between rounds. Subprocesses inherit it;
# tests of the gap itself set it back.
os.environ.setdefault("NNLITE_ROUND_GAP_S", "0.05")
# No wait for a simulated phone's thermal baseline between rounds (its own test turns it on).
os.environ.setdefault("NNLITE_THERMAL_WAIT_S", "0")
# Only the compute reference in the suite's many tiny runs; the memory one has its own tests.
os.environ.setdefault("NNLITE_REFERENCES", "compute")


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory) -> Path:
    """Conversions cache into a per-session folder, never the user's ~/.cache (also for subprocesses)."""
    cache = tmp_path_factory.mktemp("nnlite-cache")
    old = os.environ.get("NNLITE_CACHE_DIR")
    os.environ["NNLITE_CACHE_DIR"] = str(cache)
    # One 128 MiB memory reference for the whole session, not one beside every test's cache.
    os.environ.setdefault("NNLITE_REFERENCES_DIR", str(tmp_path_factory.getbasetemp() / "nnlite-references"))
    yield cache
    if old is None:
        os.environ.pop("NNLITE_CACHE_DIR", None)
    else:
        os.environ["NNLITE_CACHE_DIR"] = old


@pytest.fixture
def good_models(tmp_path) -> Path:
    dest = tmp_path / "good_models"
    shutil.copytree(FIXTURES / "good_models", dest)
    return dest


@pytest.fixture
def bad_models(tmp_path) -> Path:
    dest = tmp_path / "bad_models"
    shutil.copytree(FIXTURES / "bad_models", dest)
    return dest


@pytest.fixture
def lemur_tree(tmp_path) -> Path:
    """A writable copy of the committed LEMUR tree."""
    dest = tmp_path / "lemur"
    shutil.copytree(LEMUR_TREE, dest)
    return dest
