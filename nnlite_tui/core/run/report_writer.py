"""A part of the pipeline: writing a unit's report on one device.

The report is assembled from the unit, its conversion and benchmark outcomes, the device's facts and
the run's settings (report/document.py), written through the run's RunResults (which keeps the
run's report index) and its share of the HTML page kept (report/html_parts.py), and its path
recorded in the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nnlite_tui.core.bench.isolation import HostIsolation
from nnlite_tui.core.bench.rounds import per_round
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.devices.base import Device
from nnlite_tui.core.outcomes import BenchResult, ConversionResult, StageError
from nnlite_tui.core.report import html_parts
from nnlite_tui.core.report.document import build_report
from nnlite_tui.core.results import Report, RunResults, UnitKey
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore


class ReportWriter:
    def __init__(self, cfg: RunConfig, run_id: str, store: RunStore, devices: Mapping[str, Device],
                 isolation: HostIsolation, converter: Converter) -> None:
        self.cfg, self.run_id, self.store, self.devices = cfg, run_id, store, devices
        self.isolation, self.converter = isolation, converter
        self.results = RunResults(cfg.out)

    def write(self, spec: ModelSpec, serial: str, *, conversion: ConversionResult | None,
              bench: BenchResult | None, error: StageError | None,
              device_info: Mapping[str, Any] | None = None) -> Path:
        """The unit's report on the device `serial` (its facts asked of it when not given); its path."""
        if not device_info:
            device = self.devices.get(serial) or next(iter(self.devices.values()))
            device_info = device.info()
        settings = {**self.cfg.bench.to_dict(), "rounds": self.cfg.rounds, "max_rounds": self.cfg.max_rounds,
                    "per_round": per_round(self.cfg.bench, self.cfg.rounds).to_dict()}
        record = self.store.get(spec.name) or {}
        report = build_report(spec=spec, conversion=conversion, bench=bench, device=device_info,
                              settings=settings, run_id=self.run_id, error=error,
                              attempts=int(record.get("attempts", 1)),
                              isolation=self.isolation.describe() if device_info.get("kind") == "host" else None,
                              tool_versions=self.converter.versions_of(spec.runtime))
        path = self.results.write(Report.model_validate(report),
                                  UnitKey(spec.name, device_info.get("serial", serial), self.cfg.bench.backend))
        try:
            html_parts.add(self.cfg.out, path)
        except OSError:
            pass  # the parts file is a cache: the HTML page reads this report itself when it lacks its part
        self.store.update(spec.name, report=str(path))
        return path
