"""Screenshots of the console in tmux at 80x24, 160x45 and 220x60, during a real run.

Starts `nnlite run` on the first models of a LEMUR tree inside a detached tmux session (so the
console opens, as on any terminal), waits until a model has failed or three quarters are
finished, then resizes the tmux window to each size and captures the pane with its colours
(`tmux capture-pane -e`). Each capture is written as SVG (Rich's export of the captured text) and,
when a Chromium is on PATH, as PNG, into docs/console/. The run is stopped at the end (it lives in
a temporary directory).

    python bench/console_screens.py LEMUR_TREE [--limit 12] [--cache-dir DIR] [--out docs/console]

A warm conversion cache (--cache-dir of an earlier run) makes it take a minute instead of several.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parent.parent
SIZES = ((80, 24), (160, 45), (220, 60))
SESSION = "nnlite-screens"
CELL_PX = (8.5, 17.5)  # a monospace cell in Rich's SVG, for the PNG's window size


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def progress(events: Path) -> tuple[int, int, int]:
    """(models, finished, failed) so far, from the run's events.jsonl."""
    total, status = 0, {}
    if events.exists():
        for raw in events.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                continue  # the line being written
            if event.get("type") == "RunStarted":
                total = len(event.get("models", ()))
            elif event.get("type") == "ModelStatus":
                status[event["model"]] = event["status"]
    finished = sum(1 for s in status.values() if s in ("done", "failed", "skipped"))
    return total, finished, sum(1 for s in status.values() if s == "failed")


def render(ansi: str, width: int, height: int, out: Path) -> list[Path]:
    console = Console(record=True, width=width, height=height, file=open("/dev/null", "w"), color_system="truecolor",
                      force_terminal=True)
    console.print(Text.from_ansi(ansi.rstrip("\n")), end="", soft_wrap=True, overflow="ignore", crop=False)
    svg = out.with_suffix(".svg")
    svg.write_text(console.export_svg(title=f"nnlite console {width}x{height}"), encoding="utf-8")
    written = [svg]
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser:
        size = f"{int(width * CELL_PX[0]) + 60},{int(height * CELL_PX[1]) + 90}"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={size}", f"--screenshot={out.with_suffix('.png')}", svg.resolve().as_uri()],
                       check=False, capture_output=True, timeout=120)
        if out.with_suffix(".png").exists():
            written.append(out.with_suffix(".png"))
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", help="a LEMUR tree (ab/nn/...)")
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--cache-dir", help="conversion cache (default: a fresh one)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "console")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the moment to capture")
    args = parser.parse_args()
    if not shutil.which("tmux"):
        print("tmux is not installed")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nnlite-screens-") as tmp:
        run_dir = Path(tmp) / "run"
        cache = str(Path(args.cache_dir).resolve()) if args.cache_dir else str(Path(tmp) / "cache")
        # The console runs inside the temporary folder with a relative --out, so the screens show "run",
        # not this machine's temporary path.
        command = [sys.executable, "-m", "nnlite_tui", "run", str(Path(args.tree).resolve()), "--limit",
                   str(args.limit), "--out", "run", "--device", "host", "--cache-dir", cache, "--rounds", "1"]
        width, height = SIZES[-1]
        tmux("new-session", "-d", "-s", SESSION, "-x", str(width), "-y", str(height),
             f"cd {shlex.quote(tmp)} && PYTHONPATH={shlex.quote(str(ROOT))} {shlex.join(command)}")
        try:
            tmux("set-option", "-t", SESSION, "window-size", "manual")
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                total, finished, failed = progress(run_dir / "events.jsonl")
                if total and (failed or finished >= 0.75 * total):
                    break
                time.sleep(1.0)
            else:
                print(f"no failure and under 75% finished after {args.timeout:.0f} s: capturing anyway")
            for width, height in SIZES:
                tmux("resize-window", "-t", SESSION, "-x", str(width), "-y", str(height))
                time.sleep(2.0)  # the console re-lays out and redraws
                ansi = tmux("capture-pane", "-t", SESSION, "-p", "-e")
                for path in render(ansi, width, height, args.out / f"console-{width}x{height}"):
                    print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", SESSION], check=False, capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
