#!/usr/bin/env python3
"""Start-up cost of the CLI: `nnlite --help` wall time (target < 0.5 s) and what it imports.

    .venv/bin/python bench/startup.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "nnlite_tui", "--help"], check=True, capture_output=True)
        walls.append(time.perf_counter() - t0)
    heavy = subprocess.run(
        [sys.executable, "-c", "import sys; from click.testing import CliRunner; from nnlite_tui.cli import main; "
         "CliRunner().invoke(main, ['--help']); "
         "print(' '.join(m for m in ('torch', 'litert_torch', 'textual', 'tinydb', 'numpy') if m in sys.modules))"],
        check=True, capture_output=True, text=True).stdout.strip()
    print(f"nnlite --help   median {statistics.median(walls) * 1000:.0f} ms, max {max(walls) * 1000:.0f} ms "
          f"over {args.repeat} runs (target < 500 ms)")
    print(f"heavy modules imported by --help: {heavy or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
