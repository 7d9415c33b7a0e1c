#!/usr/bin/env python3
"""Conversion throughput: models/hour and the orchestrator's peak RSS for a folder of models.

    .venv/bin/python bench/convert_throughput.py SOURCE [SOURCE...] [--workers N] [--limit N]

Uses a fresh, empty cache, so every model is really converted (and validated) by the workers.
The orchestrator's RSS is sampled every 50 ms; the workers' peak RSS is reported per model.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    specs = discover(args.sources, limit=args.limit)
    me = psutil.Process()
    peak = {"rss": me.memory_info().rss}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            peak["rss"] = max(peak["rss"], me.memory_info().rss)

    threading.Thread(target=sample, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        opts = ConvertOptions(workers=args.workers, cache_dir=Path(tmp) / "cache")
        n = opts.worker_count(len(specs))
        conv = Converter(opts, log_dir=Path(tmp), n_workers=n)
        t0 = time.monotonic()
        results = conv.convert_many(specs, Path(tmp) / "out")
        wall = time.monotonic() - t0
        conv.close()
    stop.set()
    ok = sum(1 for r in results if r.get("ok"))
    worker_peak = max((r.get("worker_peak_rss_mb") or 0) for r in results)
    print(f"models            {len(results)} ({ok} converted, {len(results) - ok} failed)")
    print(f"workers           {n}")
    print(f"wall time         {wall:.1f} s (including worker start-up)")
    print(f"throughput        {len(results) / wall * 3600:.0f} models/hour")
    print(f"orchestrator RSS  peak {peak['rss'] / 2**20:.0f} MB")
    print(f"worker RSS        peak {worker_peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
