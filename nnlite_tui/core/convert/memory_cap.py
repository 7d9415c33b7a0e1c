"""The default memory cap of a conversion worker, from the machine's available memory.

A fixed cap either kills big models on large machines or lets a worker take a small machine's
memory away from the device benchmarks. Half of what is available when the run starts, kept between
a floor (a ResNet-18 conversion needs about 1.3 GB) and a ceiling.
"""

from __future__ import annotations

FLOOR_MB = 2048
CEILING_MB = 16384
SHARE = 0.5


def default_mem_cap_mb(available_bytes: int | None = None) -> int:
    if available_bytes is None:
        import psutil

        available_bytes = psutil.virtual_memory().available
    return int(min(CEILING_MB, max(FLOOR_MB, available_bytes / 2**20 * SHARE)))


def over_cap_message(used_mb: float, cap_mb: int) -> str:
    return (f"worker used {used_mb:.0f} MB (resident, polled), over its memory cap of {cap_mb} MB; "
            f"raise it with --mem-cap-mb (default: half the available memory, {FLOOR_MB}-{CEILING_MB} MB)")
