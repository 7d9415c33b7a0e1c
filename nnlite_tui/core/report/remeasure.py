"""`nnlite compare BEFORE AFTER --remeasure`: time both runs' artifacts again, side by side, in one session.

Two runs made at different times can differ because the device did (compare_sessions.py); no
statistics on the two runs' own figures can tell that from a real change as well as timing both
sides again, interleaved, in one session: whatever the device does moves both alike. For each unit
valid in both runs, its two artifacts (remeasure_artifacts.py) are benchmarked in fresh processes
(one benchmark = one process on the host, one app launch on a phone) in ABBA order with the side that
goes first drawn per unit (remeasure_judge.side_order), `pairs` pairs per unit, the pairs of all the
units taken in turn so that each unit's pairs spread over the session; both sides get the same
settings. The paired rounds are judged by remeasure_judge.judge_pairs.

State (the folder given by --out, else AFTER/remeasure): state.json (what is measured, where, how),
rounds.jsonl (one line per finished benchmark, flushed and synced), fetched/ (artifacts taken from
the cache). A session killed at any point (kill -9 included) resumes from them: a benchmark cut off
is done again, the finished ones are kept. The result is remeasure.json there, and the comparison.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, TypedDict, cast

from typing_extensions import NotRequired

from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.bench.settings import BenchSettings, SettingsDict
from nnlite_tui.core.bench.thermal_baseline import ThermalWait
from nnlite_tui.core.devices.facts import DeviceInfo
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.report.compare import NO_SAMPLES, Comparison, Pair
from nnlite_tui.core.report.compare_sessions import ONE_SESSION
from nnlite_tui.core.report.remeasure_artifacts import Unit, find_units
from nnlite_tui.core.report.remeasure_judge import METHOD, MIN_PAIRS_FOR_VERDICT, judge_pairs, side_order
from nnlite_tui.core.report.rows import RunResults, load_run

STATE, ROUNDS, RESULT = "state.json", "rounds.jsonl", "remeasure.json"
PAIRED = "paired rounds"


class Wanted(TypedDict):
    """What a session measures, where and how: a state.json with other values is another session's."""

    before: str
    after: str
    pairs: int
    device: str
    settings: SettingsDict  # BenchSettings.to_dict()
    seed: int


class SessionStart(TypedDict):
    at: float
    pid: int


class State(Wanted):
    """state.json."""

    started_at: float
    device_info: NotRequired[DeviceInfo]  # the device's facts (Device.info), once it is prepared
    sessions: NotRequired[list[SessionStart]]  # each time the session started or resumed


class RoundRecord(TypedDict):
    """One line of rounds.jsonl: a finished benchmark."""

    unit: str
    slot: int
    pair: int
    side: str  # "A" (before) or "B" (after)
    started_at: float
    seconds: float
    median_ns: float | None
    thermal: ThermalWait | None  # thermal_baseline.Baseline.wait: the start figures and the wait
    error: str | None


class UnitResult(TypedDict):
    model: str
    device: str
    backend: str
    precision: str
    change: str
    ratio: float | None
    ci: list[float] | None
    wilcoxon_p: float | None
    before_ns: list[float]
    after_ns: list[float]


class ResultDoc(TypedDict):
    """remeasure.json."""

    remeasured: bool
    summary: str
    method: str
    device: DeviceInfo | None
    started_at: float | None
    finished_at: float
    pairs_per_unit: int
    settings: SettingsDict
    missing: list[str]
    units: list[UnitResult]


@dataclass
class Remeasured(Comparison):
    """A comparison whose two sides were timed again side by side (its pairs' rows hold the new figures)."""

    remeasured: str = ""
    missing: list[str] = field(default_factory=list)

    @property
    def method(self) -> str:
        return METHOD.format(band=f"[{1 - self.threshold:.2f}, {1 + self.threshold:.2f}]")


def _state(state_dir: Path, wanted: Wanted) -> State:
    path = state_dir / STATE
    if path.exists():
        try:
            state: State = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path}: unreadable re-measurement state ({exc}); remove it or use another --out") from None
        differs = [k for k, v in wanted.items() if state.get(k) != v]
        if differs:
            raise ValueError(f"{path}: a re-measurement with other {', '.join(differs)} is there; use another --out")
        return state
    state_dir.mkdir(parents=True, exist_ok=True)
    started = State(**wanted, started_at=time.time())
    _write_json(path, started)
    return started


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    write_json_atomic(path, data)


def _done(state_dir: Path) -> dict[tuple[str, int], RoundRecord]:
    """Finished benchmarks by (unit id, slot); a line cut by a kill is ignored (that benchmark runs again)."""
    out: dict[tuple[str, int], RoundRecord] = {}
    try:
        lines = (state_dir / ROUNDS).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "unit" in rec and "slot" in rec:
            out[(rec["unit"], int(rec["slot"]))] = cast(RoundRecord, rec)  # a line _append wrote
    return out


def _append(state_dir: Path, record: RoundRecord) -> None:
    with open(state_dir / ROUNDS, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def remeasure(before_dir: str | Path, after_dir: str | Path, *, device_name: str = "host", pairs: int = 6,
              settings: BenchSettings, threshold: float = 0.10, out: str | Path | None = None, seed: int = 0,
              cache_dir: str | Path | None = None, say: Callable[[str], None] = print,
              stop: threading.Event | None = None) -> Remeasured:
    from nnlite_tui.core.convert.cache import default_cache_dir

    before, after = load_run(before_dir), load_run(after_dir)
    state_dir = Path(out) if out else Path(after_dir) / "remeasure"
    wanted = Wanted(before=str(Path(before_dir).resolve()), after=str(Path(after_dir).resolve()), pairs=pairs,
                    device=device_name, settings=settings.to_dict(), seed=seed)
    state = _state(state_dir, wanted)
    cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
    units = find_units(before, after, cache_root, state_dir / "fetched")
    missing = [line for u in units for line in u.missing()]
    for line in missing:
        say(f"missing artifact: {line}")
    ready = [u for u in units if u.before.path and u.after.path]
    done = _done(state_dir)
    stop = stop or threading.Event()
    if ready:
        _measure(ready, state, state_dir, device_name, pairs, settings, seed, done, say, stop)
    state = json.loads((state_dir / STATE).read_text(encoding="utf-8"))
    result = _judge(before, after, units, _done(state_dir), state, threshold, missing)
    _write_json(state_dir / RESULT, _result_doc(result, state))
    return result


def _measure(units: list[Unit], state: State, state_dir: Path, device_name: str, pairs: int,
             settings: BenchSettings, seed: int, done: dict[tuple[str, int], RoundRecord], say: Callable[[str], None], stop: threading.Event) -> None:
    from nnlite_tui.core.bench.thermal_baseline import Baseline
    from nnlite_tui.core.devices.registry import resolve_devices
    from nnlite_tui.core.events import RecordingReporter

    runtimes = tuple(sorted({u.runtime for u in units}))
    device = resolve_devices([device_name], SimpleNamespace(apk=None, runtimes=runtimes))[0]
    try:
        device.prepare(RecordingReporter())
        state.setdefault("device_info", device.info())
        state.setdefault("sessions", []).append({"at": time.time(), "pid": os.getpid()})
        _write_json(state_dir / STATE, state)
        baseline = Baseline.of(device)
        total, left = 2 * pairs * len(units), 2 * pairs * len(units) - len(done)
        for pair in range(pairs):
            for unit in units:
                order = side_order(pairs, unit.id, seed)
                for slot in (2 * pair, 2 * pair + 1):
                    if (unit.id, slot) in done or stop.is_set():
                        continue
                    side = order[slot]
                    found = unit.before if side == "A" else unit.after
                    thermal = baseline.wait(device, stop)
                    device.ready_for_benchmark(stop)
                    started = time.time()
                    block = device.benchmark(Artifact(str(found.path), unit.runtime), _unit_settings(settings, unit),
                                             "remeasure", stop)
                    valid, stats = bool(block.get("valid")), block.get("stats")
                    median = float(stats["median_ns"]) if valid and isinstance(stats, dict) else None
                    _append(state_dir, RoundRecord(unit=unit.id, slot=slot, pair=pair, side=side, started_at=started,
                                                   seconds=round(time.time() - started, 3), median_ns=median,
                                                   thermal=thermal,
                                                   error=None if valid else f"{block.get('error_stage')}: "
                                                                            f"{block.get('error_message')}"))
                    left -= 1
                    say(f"[{total - left}/{total}] {unit.name} {'before' if side == 'A' else 'after'} "
                        + (f"{median / 1e6:.3f} ms" if median else "failed"))
    finally:
        device.close()


def _unit_settings(settings: BenchSettings, unit: Unit) -> BenchSettings:
    """The same budget for both sides; the threads and backend the runs used."""
    threads = unit.settings.get("threads")
    backend = unit.settings.get("backend")
    return replace(settings, threads=int(threads) if isinstance(threads, int) and threads > 0 else settings.threads,
                   backend=backend if isinstance(backend, str) and backend else settings.backend)


def _judge(before: RunResults, after: RunResults, units: list[Unit], done: dict[tuple[str, int], RoundRecord],
           state: State, threshold: float,
           missing: list[str]) -> Remeasured:
    rows_b = {r.key: r for r in before.rows}
    rows_a = {r.key: r for r in after.rows}
    out = []
    for unit in units:
        recs = {slot: rec for (uid, slot), rec in done.items() if uid == unit.id}
        a_ns: list[float] = []
        b_ns: list[float] = []
        for pair in range(state["pairs"]):
            first, second = recs.get(2 * pair), recs.get(2 * pair + 1)
            if first and second and (m1 := first.get("median_ns")) and (m2 := second.get("median_ns")):
                by_side = {first["side"]: m1, second["side"]: m2}
                a_ns.append(by_side["A"])
                b_ns.append(by_side["B"])
        rb = replace(rows_b[unit.key], round_medians_ns=a_ns, headline_median_ns=statistics.median(a_ns) if a_ns else None,
                     samples_ns=[], stable=None, interval_ns=None)
        ra = replace(rows_a[unit.key], round_medians_ns=b_ns, headline_median_ns=statistics.median(b_ns) if b_ns else None,
                     samples_ns=[], stable=None, interval_ns=None)
        if not a_ns:
            out.append(Pair(rb, ra, NO_SAMPLES, basis=PAIRED, sessions=ONE_SESSION))
            continue
        v = judge_pairs(a_ns, b_ns, threshold)
        out.append(Pair(rb, ra, v.change, v.ratio, v.ci, PAIRED, v.p_value, sessions=ONE_SESSION))
    info = state.get("device_info") or {}
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(state["started_at"]))
    text = (f"re-measured side by side on {info.get('serial', state['device'])} ({info.get('model') or info.get('kind')}), "
            f"started {when} UTC, {state['pairs']} ABBA pairs per unit in fresh processes; the runs' own figures "
            "are not used" + ("" if state["pairs"] >= MIN_PAIRS_FOR_VERDICT else
                              f" (fewer than {MIN_PAIRS_FOR_VERDICT} pairs: the rank test cannot support a verdict)"))
    return Remeasured(before=before, after=after, threshold=threshold, pairs=out, only_before=[], only_after=[],
                      remeasured=text, missing=missing)


def _result_doc(cmp: Remeasured, state: State) -> ResultDoc:
    return {"remeasured": True, "summary": cmp.remeasured, "method": cmp.method, "device": state.get("device_info"),
            "started_at": state.get("started_at"), "finished_at": time.time(), "pairs_per_unit": state["pairs"],
            "settings": state["settings"], "missing": cmp.missing,
            "units": [{"model": p.before.model, "device": p.before.device, "backend": p.before.backend,
                       "precision": p.before.precision, "change": p.change, "ratio": p.ratio,
                       "ci": list(p.ci) if p.ci else None, "wilcoxon_p": p.p_value,
                       "before_ns": p.before.round_medians_ns, "after_ns": p.after.round_medians_ns} for p in cmp.pairs]}
