#!/usr/bin/env python3
"""The orchestrator's RSS over a long run: growth between model 50 and the last model.

    .venv/bin/python bench/orchestrator_rss.py SOURCE [--models 300] [--device host]

Repeats the given sources until --models models are queued (repeats get unique names and share the
conversion cache, so the run is long in models but short in minutes), runs the real pipeline
in this process with the host device (or --device), and samples this process's RSS at every
terminal model. Target: growth under 10% between model 50 and the last one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from nnlite_tui.core.bench.settings import BenchSettings  # noqa: E402
from nnlite_tui.core.run.config import RunConfig  # noqa: E402
from nnlite_tui.core.run.control import Control  # noqa: E402
from nnlite_tui.core.events import TERMINAL, ModelStatus  # noqa: E402
from nnlite_tui.core.run.setup import build_pipeline  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


class RssProbe:
    def __init__(self) -> None:
        self.me = psutil.Process()
        self.samples: list[tuple[int, int]] = []
        self.done = 0

    def emit(self, event) -> None:
        if isinstance(event, ModelStatus) and event.status in TERMINAL:
            self.done += 1
            self.samples.append((self.done, self.me.memory_info().rss))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--device", default="host")
    args = ap.parse_args()
    base = discover(args.sources)
    if not base:
        raise SystemExit("no models found")
    repeats = -(-args.models // len(base))
    specs = discover(args.sources * repeats, limit=args.models)
    with tempfile.TemporaryDirectory(prefix="nnlite-rss-") as tmp:
        cfg = RunConfig(sources=args.sources, out=Path(tmp) / "run", devices=[args.device],
                        bench=BenchSettings(warmup=1, runs=5, min_seconds=0.0))
        pipeline = build_pipeline(cfg, specs)
        probe = RssProbe()
        try:
            outcome = pipeline.run(probe, Control())
        finally:
            pipeline.store.close()
    at = dict(probe.samples)
    first = at.get(50) or probe.samples[0][1]
    last_n, last = probe.samples[-1]
    mb = 2 ** 20
    print(f"models            {len(specs)} ({', '.join(f'{k} {v}' for k, v in outcome.counts.items() if v)})")
    for n in (1, 50, 100, 200, 300, 500, last_n):
        if n in at:
            print(f"RSS after model {n:<4} {at[n] / mb:8.1f} MB")
    growth = (last - first) / first * 100
    print(f"growth 50 -> {last_n}: {growth:+.1f}%  (target < 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
