"""Setting a run up: open (or resume) its store with the config check, and build its Pipeline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.run.pipeline import Pipeline
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore

if TYPE_CHECKING:
    from nnlite_tui.core.cluster.session import ClusterSession
    from nnlite_tui.core.devices.base import Device

    # Given the number of models: the cluster's session, its converter and its devices (cluster/setup.py).
    RemoteParts = Callable[[int], tuple[ClusterSession, Any, list[Device]]]  # Any: a RayConverter, Converter-like


def open_run(cfg: RunConfig, specs: list[ModelSpec]) -> RunStore:
    """Open (or create) the run's store and check a resumed run's settings; raises ConfigMismatch."""
    import uuid

    from nnlite_tui.core.run.config import ConfigMismatch, check_resume
    from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime

    run_dir = Path(cfg.out)
    run_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(run_dir)
    stored = store.get_config()
    diffs = check_resume(stored, cfg)
    if diffs and not cfg.force_config:
        store.close()
        raise ConfigMismatch(f"{run_dir} was started with other settings: " + "; ".join(diffs)
                             + ". Use the same settings, another --out, or --force-config.")
    config = {**cfg.to_dict(), "run_id": (stored or {}).get("run_id") or uuid.uuid4().hex[:12],
              "tool_versions": get_runtime(DEFAULT_RUNTIME).versions(),
              "runtime_versions": {name: get_runtime(name).versions() for name in cfg.runtimes}}
    store.set_config(config)
    return store


def build_pipeline(cfg: RunConfig, specs: list[ModelSpec] | None = None, remote: RemoteParts | None = None,
                   prestart: bool = False) -> Pipeline:
    """Everything a run needs, from its config: discovery, store, converter, devices.

    With `remote` (the caller's: cluster/setup.py's cluster_parts for `--cluster ADDRESS`, so that the
    runner never imports Ray's side) conversions and devices come from a cluster; the pipeline then
    carries the session as `.cluster` for the caller to shut down.
    With `prestart` the conversion workers start importing torch and the converter now, for a caller
    that runs the pipeline next but has its own start-up first (the console's), rather than when
    run() begins; such a caller must run or shut down the pipeline.
    """
    from nnlite_tui.core.devices.registry import resolve_devices
    from nnlite_tui.core.sources.discover import discover

    if specs is None:
        specs = discover(cfg.sources, in_shape=cfg.in_shape, num_classes=cfg.num_classes, include=cfg.include,
                         exclude=cfg.exclude, limit=cfg.limit, precisions=cfg.precisions, runtimes=cfg.runtimes)
    if remote is not None:
        session, converter, devices = remote(len(specs))
    else:
        session, devices = None, resolve_devices(cfg.devices, cfg)
    store = open_run(cfg, specs)
    run_dir = Path(cfg.out)
    (run_dir / "logs").mkdir(exist_ok=True)
    if session is None:
        converter = Converter(cfg.convert, log_dir=run_dir / "logs", n_workers=cfg.convert.worker_count(len(specs)),
                              runtimes=cfg.runtimes)
        if prestart:
            converter.prestart()  # run() asks again: a worker already started is left as it is
    pipeline = Pipeline(cfg, specs, store, converter, devices)
    pipeline.cluster = session
    return pipeline
