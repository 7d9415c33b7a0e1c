"""Energy per inference on an adb device (android-app/PROTOCOL.md section 9f), the host's half: the
extras that ask for it, the time it adds to the report's deadline, and the check of the app's block.

The host trusts no figure it cannot reproduce: it recomputes the block from the block's own samples,
broadcasts, load seconds and inferences (core/bench/energy_math.py, bit-equal to the app's core) and
requires the same validity, reasons and numbers. A block that does not recompute keeps its samples
but loses its figures (`valid: false`, reason `host_recompute_mismatch`); the timed result stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.bench.energy_math import BatteryState, BatteryStateBlock, EnergyWindow, WindowBlock
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.base import BenchBlock, DeviceError

ENERGY_EXTRAS = ("energy", "energy_seconds")
SECONDS_RANGE = (1.0, 600.0)  # EnergyRun.MIN_SECONDS, MAX_SECONDS
# What the host compares after recomputing (PROTOCOL.md section 9f, "Host checks").
FIGURES = ("valid", "reason_codes", "counter", "sign_convention", "power_idle_mw", "power_load_mw", "idle_noise_mw",
           "power_delta_mw", "energy_per_inference_mj", "charging")
WINDOW_FIGURES = ("readings", "rate_hz", "current_updates", "charge_updates", "mean_current_ua", "charge_rate_ua",
                  "mean_voltage_uv", "voltage_from")
UNMEASURED = ("power_idle_mw", "power_load_mw", "idle_noise_mw", "power_delta_mw", "energy_per_inference_mj")
APP_WITHOUT_ENERGY = ("the installed benchmark app (protocol {protocol}) predates energy measurement (PROTOCOL.md "
                      "section 9f); install the current APK (android-app/README.md); the timed result stands")


def extras(s: BenchSettings) -> list[str]:
    """`--ez energy true --ef energy_seconds S`, only when the run asks for energy."""
    return ["--ez", "energy", "true", "--ef", "energy_seconds", repr(float(s.energy_seconds))] if s.energy else []


def settings_errors(s: BenchSettings) -> list[str]:
    errors = []
    if not isinstance(s.energy, bool):
        errors.append(f"energy must be true or false, got {s.energy!r}")
    low, high = SECONDS_RANGE
    v = s.energy_seconds
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
        errors.append(f"energy_seconds must be in {low:g}..{high:g}, got {v!r}")
    return errors


def window_seconds(s: BenchSettings) -> float:
    """What the energy windows add to a launch: the settle pause and two windows (one inference more
    ends the load window; the report deadline's base covers it)."""
    return energy_math.SETTLE_SECONDS + 2 * float(s.energy_seconds) if s.energy else 0.0


def refuses_energy_extras(result: BenchBlock) -> bool:
    """An app from before section 9f: an `args` report naming the energy extras as unknown."""
    message = result.get("error_message")
    message = message if isinstance(message, str) else ""
    return result.get("error_stage") == "args" and any(f"unknown extra '{k}'" in message for k in ENERGY_EXTRAS)


def not_measured(reason: str, source: str = "host") -> dict[str, object]:
    """The block of a run that asked for energy and could not have it: why, and no figure."""
    return {"valid": False, "reason": reason, "reason_codes": ["not_measured"], "source": source,
            **{k: None for k in UNMEASURED}}


def check(result: BenchBlock, s: BenchSettings, serial: str, protocol: object) -> BenchBlock:
    """The report's energy block checked (or, when the app could not measure it, one that says why)."""
    block = result.get("energy")
    if block is not None and not s.energy:
        raise DeviceError(f"{serial}: the report has an energy block nobody asked for", kind="report")
    if not s.energy or not result.get("valid"):
        return result
    if block is None:
        why = (APP_WITHOUT_ENERGY.format(protocol=protocol) if isinstance(protocol, int) and protocol < 3 else
               "the app's valid report has no energy block although energy was asked for")
        result["energy"] = not_measured(why, source="device")
        return result
    result["energy"] = recomputed(_part(block, "energy", serial), serial)
    return result


def _part(value: object, where: str, serial: str) -> dict[str, object]:
    """A JSON object of the app's block (the report schema requires it; a report without it is the app's fault)."""
    if not isinstance(value, dict):
        raise DeviceError(f"{serial}: the report's {where} is not an object: {value!r:.80}", kind="report")
    return value


def _number(value: object, where: str, serial: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DeviceError(f"{serial}: the report's {where} is not a number: {value!r:.80}", kind="report")
    return value


def recomputed(block: dict[str, object], serial: str = "device") -> dict[str, object]:
    """The app's block with `host_check`; its figures removed when the host's arithmetic disagrees."""
    windows = {side: _part(block.get(side), f"energy.{side}", serial) for side in ("idle", "load")}
    # The report schema checked these blocks' keys and types before the host recomputes from them.
    idle = EnergyWindow.from_dict(cast(WindowBlock, windows["idle"]))
    load = EnergyWindow.from_dict(cast(WindowBlock, windows["load"]))
    before = BatteryState.from_dict(cast(BatteryStateBlock, _part(block.get("battery_before"),
                                                                   "energy.battery_before", serial)))
    after = BatteryState.from_dict(cast(BatteryStateBlock, _part(block.get("battery_after"),
                                                                  "energy.battery_after", serial)))
    codes = block.get("reason_codes")
    codes = list(codes) if isinstance(codes, list) else []
    reason = block.get("reason")
    reason = reason if isinstance(reason, str) else None
    # A read that threw is the one reason the samples cannot show; the app's word is kept for it.
    read_error = reason if "counter_read_failed" in codes else None
    inferences = windows["load"].get("inferences")
    if isinstance(inferences, bool) or not isinstance(inferences, int):
        raise DeviceError(f"{serial}: the report's energy.load.inferences is not an integer: {inferences!r:.80}",
                          kind="report")
    r = energy_math.evaluate(idle, load, inferences, before, after, read_error)
    source, sources = block.get("source"), block.get("counter_sources")
    mine: Mapping[str, object] = energy_math.block(r, source if isinstance(source, str) else "", sources if isinstance(sources, dict) else {},
                             _number(block.get("window_seconds"), "energy.window_seconds", serial),
                             idle, load, inferences, before, after)
    differences = [f"{k}: app {block.get(k)!r}, host {mine[k]!r}" for k in FIGURES if block.get(k) != mine[k]]
    for side in ("idle", "load"):
        host_side = cast(Mapping[str, object], mine[side])
        differences += [f"{side}.{k}: app {windows[side].get(k)!r}, host {host_side[k]!r}" for k in WINDOW_FIGURES
                        if windows[side].get(k) != host_side[k]]
    out = {**block, "host_check": {"recomputed": True, "equal": not differences, "differences": differences[:10]}}
    if differences:
        out.update({k: None for k in UNMEASURED}, valid=False, reason_codes=[*codes, "host_recompute_mismatch"],
                   reason="; ".join(filter(None, [reason, "the host's recomputation from the block's "
                                                  "own samples differs: " + "; ".join(differences[:3])])))
    return out
