"""A report's energy figure as the result views read it (summary.csv, LEMUR export, detail screen,
HTML report, compare): from `benchmark.energy` (android-app/PROTOCOL.md section 9f on adb devices,
core/devices/host_energy.py on the host). A figure is shown only when its block is valid; otherwise
the views show why there is none, never a number.

The figure is a consistent relative estimate on one device (battery counters, RAPL), not a meter's:
compare it across models on the same device, not across devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from nnlite_tui.core.results.model import EnergyBlock

# summary.csv's energy columns (document.SUMMARY_COLUMNS ends with them).
SUMMARY_COLUMNS = ("energy_per_inference_mj", "power_load_mw", "power_idle_mw", "power_delta_mw", "energy_valid",
                   "energy_source", "energy_reason")
LEMUR_KEY = "nnlite_energy"  # the LEMUR export's extra key (LEMUR's importer ignores unknown keys)


@dataclass(frozen=True)
class EnergyFigure:
    valid: bool
    energy_per_inference_mj: float | None
    power_load_mw: float | None
    power_idle_mw: float | None
    power_delta_mw: float | None
    source: str | None  # device (the app), simulated (the simulator), host (RAPL)
    counter: str | None
    reason: str | None
    window_seconds: float | None

    @property
    def label(self) -> str:
        """One cell: `0.63 mJ · 2302 mW` when measured, else why not (shortened by the view)."""
        if self.valid and self.energy_per_inference_mj is not None:
            power = f" · {self.power_load_mw:.0f} mW" if self.power_load_mw is not None else ""
            simulated = " (simulated)" if self.source == "simulated" else ""
            return f"{self.energy_per_inference_mj:.4g} mJ{power}{simulated}"
        return f"no energy figure: {self.reason or 'not measured'}"


def energy_of(block: EnergyBlock | None) -> EnergyFigure | None:
    """None when the run did not ask for energy (the report has no `benchmark.energy`)."""
    if block is None:
        return None
    valid = block.valid is True
    return EnergyFigure(valid=valid, energy_per_inference_mj=block.energy_per_inference_mj if valid else None,
                        power_load_mw=block.power_load_mw, power_idle_mw=block.power_idle_mw,
                        power_delta_mw=block.power_delta_mw if valid else None, source=block.source,
                        counter=block.counter, reason=block.reason, window_seconds=block.window_seconds)


def _round(v: float | None) -> float | None:
    # Six significant digits, not six decimals: a small model's energy per inference is a few µJ.
    return None if v is None else float(f"{float(v):.6g}")


class LemurEnergy(TypedDict):
    """The LEMUR export's LEMUR_KEY object."""

    valid: bool
    energy_per_inference_mj: float | None
    power_load_mw: float | None
    power_idle_mw: float | None
    power_delta_mw: float | None
    source: str | None
    counter: str | None
    window_seconds: float | None
    reason: str | None
    meaning: str


def summary_columns(block: EnergyBlock | None) -> dict[str, float | bool | str | None]:
    """summary.csv's energy columns (SUMMARY_COLUMNS) of a report's `benchmark.energy`."""
    e = energy_of(block)
    if e is None:
        return {k: None for k in SUMMARY_COLUMNS}
    return {"energy_per_inference_mj": _round(e.energy_per_inference_mj), "power_load_mw": _round(e.power_load_mw),
            "power_idle_mw": _round(e.power_idle_mw), "power_delta_mw": _round(e.power_delta_mw),
            "energy_valid": e.valid, "energy_source": e.source, "energy_reason": e.reason}


def lemur_extra(block: EnergyBlock | None) -> dict[str, LemurEnergy]:
    """{LEMUR_KEY: ...} for a report that asked for energy (`block`: its `benchmark.energy`), else nothing."""
    e = energy_of(block)
    if e is None:
        return {}
    return {LEMUR_KEY: {"valid": e.valid, "energy_per_inference_mj": e.energy_per_inference_mj,
                        "power_load_mw": e.power_load_mw, "power_idle_mw": e.power_idle_mw,
                        "power_delta_mw": e.power_delta_mw, "source": e.source, "counter": e.counter,
                        "window_seconds": e.window_seconds, "reason": e.reason,
                        "meaning": "a consistent relative estimate on this device, not an absolute measurement"}}
