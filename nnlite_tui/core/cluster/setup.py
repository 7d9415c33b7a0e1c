"""A run's cluster parts: connect, conversion actors for the cluster's CPUs, devices on every node."""

from __future__ import annotations

from pathlib import Path

from nnlite_tui.core.cluster.address import check_address
from nnlite_tui.core.cluster.session import ClusterSession, cluster_cpus, connect
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.devices.base import Device


def cluster_parts(cfg: RunConfig, n_models: int, address: str):
    """(session, RayConverter, devices) for `nnlite run --cluster ADDRESS`; raises ClusterError."""
    check_address(address)  # seconds, where ray.init would retry for minutes
    session: ClusterSession = connect(address)
    from nnlite_tui.core.cluster.ray_converter import RayConverter
    from nnlite_tui.core.cluster.remote_device import resolve_cluster_devices

    try:
        devices: list[Device] = resolve_cluster_devices(list(cfg.devices), cfg.apk)
        n_workers = cfg.convert.workers or max(1, min(cluster_cpus(), n_models))
        converter = RayConverter(cfg.convert, n_workers=n_workers, log_dir=Path(cfg.out) / "logs")
    except BaseException:
        session.shutdown()
        raise
    return session, converter, devices
