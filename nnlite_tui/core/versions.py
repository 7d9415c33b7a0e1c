"""Installed versions of the packages that make a result: for cache keys and every report."""

from __future__ import annotations

from importlib import metadata


def dist_version(dist: str) -> str:
    """The installed version of a distribution, or "absent" (a key that still names what is missing)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"
