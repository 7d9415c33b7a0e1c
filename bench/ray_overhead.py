#!/usr/bin/env python3
"""What the Ray cluster path costs per model, and conversion throughput on 1 vs 2 nodes.

    .venv/bin/python bench/ray_overhead.py [SOURCE] [--models N] [--part overhead|nodes|all]

overhead: in one process, a local Converter and a RayConverter (a private `--cluster local` Ray,
one actor) convert the same models with caches off, alternating local/cluster per model after
both are warm; likewise LocalDevice and RemoteDevice("host") benchmark the same .tflite. The wall
times are printed side by side, but on a shared machine their difference is mostly noise; the
cluster's own cost is measured directly: the driver's wall time minus the time the actor spent
converting (or the device spent benchmarking), i.e. the actor call, the object-store transfer of
the .tflite and the result's return. Also: Ray start-up, and moving a 100 MB file through the store.
nodes: conversion wall time for the same models with one Ray node (1 CPU) and then with a second
node (1 CPU) joined, both on this machine. Both share this machine's cores, so the second node
shows Ray's scheduling cost, not a speed-up a second host would give.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.bench.settings import BenchSettings  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.outcomes import Artifact  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


def _timed(fn):
    t0 = time.monotonic()
    out = fn()
    return time.monotonic() - t0, out


def overhead(specs, tmp: Path) -> None:
    from nnlite_tui.core.cluster.session import connect

    t_init, session = _timed(lambda: connect("local"))
    import ray

    from nnlite_tui.core.cluster import transfer
    from nnlite_tui.core.cluster.ray_converter import RayConverter
    from nnlite_tui.core.cluster.remote_device import RemoteDevice
    from nnlite_tui.core.devices.local import LocalDevice
    from nnlite_tui.core.events import RecordingReporter

    print(f"ray.init (local): {t_init:.1f} s")
    opts = ConvertOptions(workers=1, use_cache=False, cache_dir=tmp / "cache")
    local, remote = Converter(opts, log_dir=tmp, n_workers=1), RayConverter(opts, n_workers=1)
    local.prestart()
    remote.prestart()
    warm = specs[0]
    local.convert(warm, tmp / "warm-l.tflite")
    remote.convert(warm, tmp / "warm-r.tflite")
    rows = []
    for spec in specs:
        t_l, r_l = _timed(lambda: local.convert(spec, tmp / "l" / f"{spec.name}.tflite"))
        t_r, r_r = _timed(lambda: remote.convert(spec, tmp / "r" / f"{spec.name}.tflite"))
        extra = t_r - float(r_r.get("actor_seconds") or t_r)
        rows.append((spec.name, t_l, t_r, extra))
        print(f"  convert {spec.name:20s} local {t_l:6.2f} s  cluster {t_r:6.2f} s  (wall diff {t_r - t_l:+6.2f} s;"
              f" cluster cost beyond the actor's conversion {extra:.3f} s)")
    conv_extra = [r[3] for r in rows]
    host, node = LocalDevice(), ray.get_runtime_context().get_node_id()
    remote_host = RemoteDevice("local", node, "host", "host")
    remote_host.prepare(RecordingReporter())
    settings = BenchSettings(warmup=1, runs=5, min_seconds=0)
    bench_extra = []
    for name, *_ in rows:
        path = str(tmp / "l" / f"{name}.tflite")
        t_l, _ = _timed(lambda: host.benchmark(Artifact(path), settings, "bench"))
        t_r, _ = _timed(lambda: remote_host.benchmark(Artifact(path), settings, "bench"))
        bench_extra.append(remote_host.last_overhead_s)
        print(f"  benchmark {name:18s} local {t_l:6.2f} s  cluster {t_r:6.2f} s  (wall diff {t_r - t_l:+6.2f} s;"
              f" cluster cost beyond the device's benchmark {remote_host.last_overhead_s:.3f} s)")
    big = tmp / "big.bin"
    big.write_bytes(os.urandom(100 * 2**20))
    t_put, refs = _timed(lambda: transfer.put_file(big))
    t_get, _ = _timed(lambda: transfer.write_file(refs, tmp / "big-copy.bin"))
    print(f"100 MB through the object store: put {t_put:.2f} s, get+write {t_get:.2f} s")
    conv, bench = statistics.median(conv_extra), statistics.median(bench_extra)
    print(f"cluster cost per model (median): conversion {conv:.3f} s (max {max(conv_extra):.3f}), benchmark per "
          f"device {bench:.3f} s (max {max(bench_extra):.3f}) -> {conv + bench:.3f} s/model (target <= 0.3 s)")
    remote_host.close()
    local.close()
    remote.close()
    session.shutdown()


def nodes(specs, tmp: Path) -> None:
    from nnlite_tui.core.cluster.lab import Lab
    from nnlite_tui.core.cluster.session import connect

    repo = str(Path(__file__).resolve().parent.parent)
    lab = Lab(Path(tempfile.gettempdir()) / f"nlb-{os.getpid()}")  # short: Ray's socket paths have a length limit
    try:
        lab.start_node("node1", num_cpus=1, env={"PYTHONPATH": repo})
        session = connect(lab.address)
        from nnlite_tui.core.cluster.ray_converter import RayConverter

        for count in (1, 2):
            if count == 2:
                lab.start_node("node2", num_cpus=1, env={"PYTHONPATH": repo})
            opts = ConvertOptions(workers=count, use_cache=False, cache_dir=tmp / f"cache{count}")
            conv = RayConverter(opts, n_workers=count)
            conv.prestart()
            t_warm, _ = _timed(lambda: [conv.convert(specs[0], tmp / f"w{count}-{i}.tflite") for i in range(count)])
            import concurrent.futures as cf

            with cf.ThreadPoolExecutor(count) as pool:
                wall, results = _timed(lambda: list(pool.map(
                    lambda s: conv.convert(s, tmp / f"n{count}" / f"{s.name}.tflite"), specs)))
            ok = sum(1 for r in results if r.get("ok"))
            where = sorted({r.get("node") for r in results})
            print(f"{count} node(s): {len(specs)} conversions ({ok} ok) in {wall:.1f} s = "
                  f"{len(specs) / wall * 3600:.0f} models/hour on {where} (warm-up {t_warm:.1f} s)")
            conv.close()
        session.shutdown()
    finally:
        lab.stop()
        shutil.rmtree(lab.temp_dir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", nargs="?", default="sample_models")
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--part", choices=["overhead", "nodes", "all"], default="all")
    args = ap.parse_args()
    specs = discover([args.source], limit=args.models)
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("overhead", "all"):
            overhead(specs, Path(tmp))
        if args.part in ("nodes", "all"):
            nodes(specs, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
