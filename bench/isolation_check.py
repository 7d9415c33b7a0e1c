#!/usr/bin/env python3
"""Measurement integrity on the host: per-model medians with overlap on and off must agree.

    .venv/bin/python bench/isolation_check.py MODELS [--limit N] [--group 4] [--rounds 2] [--gap 2]
                                              [--runs 50] [--min-seconds 3] [--isolation pause]
                                              [--include GLOB] [--no-huge-pages] [--verbose]
    .venv/bin/python bench/isolation_check.py MODELS --whole-runs [--limit N]

Paired (the default, and the PASS/FAIL): the models are converted once, then each one is timed by
the pipeline's own host device (LocalDevice, one fresh process, pinned like in a run) through the
pipeline's HostIsolation, alternately
  on   while the pipeline's Converter pool converts other models on every worker (overlap), and
  off  with no conversion process alive at all,
in ABBA order per group of models (on, off, off, on), twice by default, so that the machine's drift,
which can move a model's median by 10-25% within a minute (the noise floor printed below shows how
much on the machine at hand; bench/host_drift.py shows it with nothing else running), weighs on both
sides alike.
Per model: mean of the "on" medians vs mean of the "off" medians; PASS when every model is within
--tolerance (10%). The two "off" medians of a model, a few seconds apart, show the noise floor.

--whole-runs: three real `nnlite run --headless` runs instead: cold cache (conversions overlap),
warm cache, warm cache again. Minutes apart, so the machine's drift shows up in both comparisons;
printed for context, it is the end-to-end view of the same question.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.bench.settings import BenchSettings  # noqa: E402
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.devices.local import LocalDevice  # noqa: E402
from nnlite_tui.core.bench.isolation import METHODS, HostIsolation  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


class ConversionLoad:
    """Keeps every worker of a Converter converting models (no cache) until told to stop."""

    def __init__(self, converter: Converter, specs, out_dir: Path):
        self.converter = converter
        self.specs = specs
        self.out_dir = out_dir
        self.feeding = threading.Event()
        self.in_flight = 0
        self.converted = 0
        self._lock = threading.Lock()
        self._next = 0
        for i in range(converter.n_workers):
            threading.Thread(target=self._feed, args=(i,), daemon=True, name=f"load-{i}").start()

    def _feed(self, slot: int) -> None:
        while True:
            self.feeding.wait()
            with self._lock:
                if not self.feeding.is_set():
                    continue
                spec = self.specs[self._next % len(self.specs)]
                self._next += 1
                self.in_flight += 1
            try:
                result = self.converter.convert(spec, self.out_dir / f"load-{slot}.tflite")
            finally:
                with self._lock:
                    self.in_flight -= 1
            if result.get("ok"):
                self.converted += 1

    def start(self, timeout_s: float = 240.0) -> None:
        """Returns once every worker is up and has a conversion in hand."""
        self.feeding.set()
        deadline = time.monotonic() + timeout_s
        while self.converter.busy_workers() < self.converter.n_workers:
            if time.monotonic() > deadline:
                raise RuntimeError("conversion workers did not start converting")
            time.sleep(0.1)

    def stop(self) -> None:
        """Returns once no conversion process is alive (killed, not drained: that takes seconds)."""
        with self._lock:
            self.feeding.clear()
        while True:
            self.converter.kill_all()
            with self._lock:
                idle = self.in_flight == 0
            if idle and not self.converter.worker_pids():
                return
            time.sleep(0.1)


def convert_targets(specs, out_dir: Path, options: ConvertOptions, workers: int) -> dict[str, str]:
    with Converter(options, n_workers=workers) as conv:
        results = conv.convert_many(specs, out_dir)
    return {r["model"]: r["artifact_path"] for r in results if r.get("ok")}


def measure(device: LocalDevice, isolation: HostIsolation, path: str, settings: BenchSettings) -> float:
    device.ready_for_benchmark()  # as the pipeline does: the process starts up before the pause
    with isolation.benchmarking():
        result = device.benchmark(path, settings, "isolation-check")
    if not result.get("valid"):
        raise RuntimeError(f"{path}: {result.get('error_stage')}: {result.get('error_message')}")
    return result["stats"]["median_ns"] / 1e6


def paired(args) -> int:
    specs = discover(args.models, include=args.include, limit=args.limit)
    workers = args.workers or ConvertOptions().worker_count()
    settings = BenchSettings(runs=args.runs, min_seconds=args.min_seconds)
    with tempfile.TemporaryDirectory(prefix="nnlite-isolation-") as tmp:
        t0 = time.monotonic()
        # Never from or into the user's cache: the load must really convert.
        options = ConvertOptions(use_cache=False, cache_dir=Path(tmp) / "cache")
        targets = convert_targets(specs, Path(tmp) / "targets", options, workers)
        print(f"converted {len(targets)} of {len(specs)} models in {time.monotonic() - t0:.0f} s; "
              f"{workers} conversion workers, isolation {args.isolation}, "
              f"huge pages {'off' if args.no_huge_pages else 'on'}", flush=True)
        load_specs = [s for s in specs if s.name in targets]
        converter = Converter(options, n_workers=workers)
        load = ConversionLoad(converter, load_specs, Path(tmp) / "load")
        isolation = HostIsolation(converter, settings.threads, method=args.isolation)
        device = LocalDevice(cpus=isolation.bench_cpus if isolation.pins_benchmark else None,
                             huge_pages=not args.no_huge_pages)
        on: dict[str, list[float]] = {m: [] for m in targets}
        off: dict[str, list[float]] = {m: [] for m in targets}
        names = sorted(targets)
        groups = [names[i:i + args.group] for i in range(0, len(names), args.group)]
        try:
            for gi, group in enumerate(groups, 1):
                for phase in ("on", "off", "off", "on") * args.rounds:
                    if phase == "on":
                        load.start()
                    else:
                        load.stop()
                    for name in group:
                        if phase == "on":
                            time.sleep(args.gap)  # conversions run flat out, as between a run's benchmarks
                        ms = measure(device, isolation, targets[name], settings)
                        (on if phase == "on" else off)[name].append(ms)
                        if args.verbose:
                            print(f"  {phase:<3} {name[:44]:<44} {ms:9.4f} ms", flush=True)
                print(f"group {gi}/{len(groups)} done ({time.monotonic() - t0:.0f} s, "
                      f"{load.converted} load conversions finished)", flush=True)
        finally:
            load.stop()
            converter.close()
            device.close()
    return report(on, off, args.tolerance)


def report(on: dict[str, list[float]], off: dict[str, list[float]], tolerance: float) -> int:
    print(f"\n{'model':<44} {'on ms':>9} {'off ms':>9} {'on vs off':>9} {'off spread':>10}")
    diffs, spreads = [], []
    for model in sorted(on):
        a, b = statistics.fmean(on[model]), statistics.fmean(off[model])
        diff = (a - b) / b
        spread = (max(off[model]) - min(off[model])) / b
        diffs.append(diff)
        spreads.append(spread)
        print(f"{model[:44]:<44} {a:>9.4f} {b:>9.4f} {diff:>+9.1%} {spread:>10.1%}")
    worst = max(abs(d) for d in diffs)
    print(f"\n{len(diffs)} models. on vs off: worst {worst:.1%}, mean {statistics.fmean(diffs):+.1%}. "
          f"Noise floor (spread of a model's off medians): worst {max(spreads):.1%}, "
          f"mean {statistics.fmean(spreads):.1%}.")
    ok = worst <= tolerance
    print(f"{'PASS' if ok else 'FAIL'}: tolerance {tolerance:.0%} per model")
    return 0 if ok else 1


def medians(run_dir: Path) -> dict[str, float]:
    with open(run_dir / "summary.csv", newline="") as f:
        return {r["model"]: float(r["median_ms"]) for r in csv.DictReader(f) if r.get("median_ms")}


def whole_runs(args) -> int:
    with tempfile.TemporaryDirectory(prefix="nnlite-isolation-") as tmp:
        env = {**os.environ, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache")}
        common = [*args.models, "--headless", "--runs", str(args.runs), "--min-seconds", str(args.min_seconds),
                  "--isolation", args.isolation, *(["--limit", str(args.limit)] if args.limit else [])]
        for name in ("overlap", "alone", "alone-again"):
            subprocess.run([sys.executable, "-m", "nnlite_tui", "run", *common, "--out", str(Path(tmp) / name)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        a, b, c = (medians(Path(tmp) / n) for n in ("overlap", "alone", "alone-again"))
    models = sorted(set(a) & set(b) & set(c))
    print(f"{'model':<44} {'overlap ms':>11} {'alone ms':>9} {'again ms':>9} {'A vs B':>7} {'B vs C':>7}")
    diffs, noises = [], []
    for model in models:
        diffs.append((a[model] - b[model]) / b[model])
        noises.append((c[model] - b[model]) / b[model])
        print(f"{model[:44]:<44} {a[model]:>11.4f} {b[model]:>9.4f} {c[model]:>9.4f} "
              f"{diffs[-1]:>+7.1%} {noises[-1]:>+7.1%}")
    print(f"\n{len(models)} models. overlap vs alone: worst {max(map(abs, diffs)):.1%}, "
          f"mean {statistics.fmean(diffs):+.1%}. alone vs alone again: worst {max(map(abs, noises)):.1%}, "
          f"mean {statistics.fmean(noises):+.1%}. (Context only: runs minutes apart carry the drift.)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--include", action="append", default=[], help="only models matching (glob); repeatable")
    ap.add_argument("--group", type=int, default=4, help="models per ABBA group")
    ap.add_argument("--rounds", type=int, default=2, help="ABBA repetitions per group")
    ap.add_argument("--workers", type=int, default=0, help="conversion workers (default: as nnlite run)")
    ap.add_argument("--gap", type=float, default=2.0,
                    help="seconds of conversion before each overlapped benchmark")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=3.0)
    ap.add_argument("--isolation", choices=METHODS, default="pause")
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--no-huge-pages", action="store_true",
                    help="time without transparent huge pages, as host benchmarks did before they asked for them")
    ap.add_argument("--verbose", action="store_true", help="print every measurement")
    ap.add_argument("--whole-runs", action="store_true", help="compare three real nnlite runs instead")
    args = ap.parse_args()
    return whole_runs(args) if args.whole_runs else paired(args)


if __name__ == "__main__":
    sys.exit(main())
