"""Longest-first conversion order: an estimate of each model's conversion cost before it runs.

Conversions run on a few workers; a run whose biggest conversion starts last ends with that one
running alone while the other cores idle. So the run converts the costliest models first (the
queue shown to the user keeps their order; only the order of execution changes):

- a model whose result is already in the conversion cache costs nothing: it goes last (taken
  earlier, it would fill the lookahead slots with work for the devices while the workers idle; at
  the end the devices measure it while the last conversions finish);
- otherwise the cost comes from the model's size, counted in a subprocess on torch's meta device
  (cost_probe.py, in the sandbox like the conversion workers: it builds the model): export and lowering grow with the number of modules, serialisation and the
  check with the number of parameters. The constants only need to rank models, not time them
  (fitted on LEMUR models on a 2-core host: 0.4 M params / 9 modules ~2 s of CPU,
  56 M / 21 ~8.5 s, 46 M / 193 ~59 s);
- a model the probe could not build, or has not reached yet, comes after the measured ones and
  before the cached ones, in the user's order.

The probe streams its answers, so a long queue is ranked from its front while the run starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from nnlite_tui.core.convert.messages import probe_answer
from nnlite_tui.core.spec import ModelSpec

BASE_S, PER_MODULE_S, PER_MPARAM_S = 1.0, 0.1, 0.1  # an estimate is never below BASE_S
CACHED = 0.0  # a cache hit costs nothing: last
UNKNOWN = BASE_S / 2  # not measured: after every measured model, before the cached ones
MAX_ANSWER = 4096  # characters of one probe answer line (a name and two counts); longer is not one
MAX_PROBES = 5  # probe subprocesses per run: each model that hangs or crashes one costs a restart


def estimate_s(params: int, modules: int) -> float:
    """Estimated CPU seconds to convert and check a model of this size."""
    return BASE_S + PER_MODULE_S * modules + PER_MPARAM_S * params / 1e6


def cached_costs(specs: Iterable[ModelSpec], converter: Any) -> dict[str, float]:
    """CACHED for each fp32 model whose conversion result (success or final failure) is cached."""
    cache, key = getattr(converter, "cache", None), getattr(converter, "key", None)
    if cache is None or key is None or not getattr(converter.options, "use_cache", True):
        return {}
    return {s.name: CACHED for s in specs if s.precision == "fp32" and cache.get(key(s)) is not None}


def probe(specs: list[ModelSpec], on_cost: Callable[[str, float], None], *, timeout_s: float = 600.0,
          per_model_s: float = 8.0, stop: threading.Event | None = None, sandbox: str = "auto") -> int:
    """Run cost_probe over specs, calling on_cost(name, seconds) as each model is measured.

    Returns how many were measured. A model that takes over per_model_s to build (a constructor
    that hangs) is given up and the probe goes on with the next one; all of it stops at timeout_s
    or when `stop` is set. Unmeasured models keep the user's order.
    """
    deadline = time.monotonic() + timeout_s
    measured, todo = 0, list(specs)
    for _ in range(MAX_PROBES):
        if not todo or time.monotonic() > deadline or (stop is not None and stop.is_set()):
            break
        answered = _probe_once(todo, on_cost, deadline, per_model_s, stop, sandbox)
        measured += sum(1 for ok in answered.values() if ok)
        # The first unanswered model hung or crashed the probe: the next probe starts after it.
        todo = [s for s in todo if s.name not in answered][1:]
    return measured


def _probe_once(specs: list[ModelSpec], on_cost: Callable[[str, float], None], deadline: float,
                per_model_s: float, stop: threading.Event | None, sandbox: str) -> dict[str, bool]:
    """One probe subprocess over specs until it ends or is killed; {name: measured} of its answers."""
    from nnlite_tui.core.convert.sandbox.launch import start_model_process

    proc = start_model_process([sys.executable, "-m", "nnlite_tui.core.convert.cost_probe"], sandbox, specs,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    last = [time.monotonic() + per_model_s]  # its start-up (importing torch) gets one more allowance

    def guard() -> None:  # kill it on a stuck model, at the deadline or on a stop
        while proc.poll() is None:
            now = time.monotonic()
            if now - last[0] > per_model_s or now > deadline or (stop is not None and stop.is_set()):
                proc.kill()
                return
            time.sleep(0.1)

    threading.Thread(target=guard, daemon=True, name="cost-probe-guard").start()
    answered: dict[str, bool] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps([s.to_dict() for s in specs]))
            proc.stdin.close()
        except BrokenPipeError:
            return answered  # it died at start
        # The probe ran model code: each line is hostile data, read with a bound and checked.
        while line := proc.stdout.readline(MAX_ANSWER):
            last[0] = time.monotonic()
            try:
                answer = probe_answer(json.loads(line))
            except (ValueError, RecursionError):
                continue  # not one of its answers
            params, modules = answer.params, answer.modules
            answered[answer.name] = params is not None and modules is not None
            if params is not None and modules is not None:
                on_cost(answer.name, estimate_s(params, modules))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return answered


def rank_conversions(specs: list[ModelSpec], converter: Any, set_costs: Callable[[dict[str, float]], None],
                     ready: threading.Event, *, first_batch_s: float = 10.0,
                     stop: threading.Event | None = None) -> None:
    """Give the work queue a cost per model: cached ones at once, then the probe's as they come.

    `ready` is set once every model has a cost or after first_batch_s, whichever comes first, so
    the first conversions start ranked without a long queue holding up the run.
    """
    cached = cached_costs(specs, converter)
    set_costs(cached)
    base = {s.name: s.name.split("@", 1)[0] for s in specs}
    # A derived precision follows its fp32 model (it is made from its artifact), just behind it.
    variants: dict[str, list[str]] = {}
    for s in specs:
        if s.precision != "fp32":
            variants.setdefault(base[s.name], []).append(s.name)
    todo = [s for s in specs if s.precision == "fp32" and s.name not in cached]
    if len(todo) <= converter.n_workers:
        ready.set()  # every conversion starts at once: no order to find, no probe to pay for
        return
    started = time.monotonic()
    pending = {s.name for s in todo}

    def on_cost(name: str, cost: float) -> None:
        costs = {name: cost, **{v: cost - 1e-6 for v in variants.get(name, ())}}
        set_costs(costs)
        pending.discard(name)
        if not pending or time.monotonic() - started > first_batch_s:
            ready.set()

    timer = threading.Timer(first_batch_s, ready.set)
    timer.daemon = True
    timer.start()
    try:
        probe(todo, on_cost, stop=stop, sandbox=getattr(converter.options, "sandbox", "auto"))
    finally:
        timer.cancel()
        ready.set()
