"""Longest-first conversions: the costliest model converts first, the user's queue order stays."""

from __future__ import annotations

import shutil
import time

import pytest

from nnlite_tui.core.convert.ranking import CACHED, estimate_s, probe
from nnlite_tui.core.events import RunStarted, StageStarted
from nnlite_tui.core.run.scheduling import WorkQueue
from nnlite_tui.core.sources.discover import discover
from tests.core.test_pipeline import make_cfg, run

pytestmark = pytest.mark.slow  # real conversions and runs

# Many modules and parameters, still quick to convert: the costliest of the folder by far.
BIG = '''import torch.nn as nn


def supported_hyperparameters():
    return {'lr'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        layers = [nn.Flatten(), nn.Linear(in_shape[1] * in_shape[2] * in_shape[3], 256)]
        for _ in range(24):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        layers.append(nn.Linear(256, out_shape[0]))
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)
'''


def _folder(tmp_path, good_models):
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(good_models / "tiny_conv.py", folder / "a_tiny.py")
    shutil.copy(good_models / "tiny_conv.py", folder / "b_tiny.py")
    (folder / "z_big.py").write_text(BIG)
    return folder


def test_the_queue_hands_out_the_costliest_first_and_ties_in_queue_order():
    work = WorkQueue(["host"], slots=4)
    for name in ("a", "b", "c", "d", "e"):
        work.enqueue(name)
    work.set_costs({"c": 5.0, "d": 1.0})
    assert work.next_pending() == "c"
    work.set_costs({"a": 9.0, "b": CACHED})  # costs arriving while the run is under way
    # measured costliest first, then the unmeasured one, then the cache hit (it costs nothing)
    assert [work.next_pending() for _ in range(4)] == ["a", "d", "e", "b"]
    assert work.next_pending() is None
    work.requeue("a")
    assert work.next_pending() == "a" and work.next_pending() is None


def test_the_probe_measures_models_without_converting_them(tmp_path, good_models):
    specs = discover([str(_folder(tmp_path, good_models))])
    costs: dict[str, float] = {}
    assert probe(specs, costs.__setitem__, timeout_s=120) == 3
    assert costs["a_tiny"] == costs["b_tiny"] == estimate_s(3 * 8 * 9 + 8 + 8 * 10 + 10, 3)
    assert costs["z_big"] > 2 * costs["a_tiny"]


def test_a_run_converts_the_big_model_first_and_keeps_the_users_order(tmp_path, good_models):
    folder = _folder(tmp_path, good_models)
    out = tmp_path / "run"
    outcome, rec = run(make_cfg(out, [folder]))
    started = rec.of(RunStarted)[0]
    assert list(started.models) == ["a_tiny", "b_tiny", "z_big"]  # the queue shown keeps the user's order
    converted = [e.model for e in rec.of(StageStarted) if e.stage == "convert"]
    assert converted == ["z_big", "a_tiny", "b_tiny"]
    assert outcome.counts.get("done") == 3, outcome.counts

    # Again on the same cache: everything is cached (costs nothing), so the order is the user's.
    again = tmp_path / "again"
    _, rec2 = run(make_cfg(again, [folder]))
    assert [e.model for e in rec2.of(StageStarted) if e.stage == "convert"] == ["a_tiny", "b_tiny", "z_big"]



HANGS = '''import torch.nn as nn


def supported_hyperparameters():
    return {'lr'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        while True:  # a constructor that never returns
            pass
'''


def test_the_probe_skips_a_model_that_hangs_or_kills_it_and_measures_the_rest(tmp_path, good_models, bad_models):
    folder = _folder(tmp_path, good_models)
    (folder / "c_hangs.py").write_text(HANGS)
    shutil.copy(bad_models / "crashes_worker.py", folder / "a_crashes.py")
    specs = discover([str(folder)])
    assert [s.name for s in specs][:2] == ["a_crashes", "a_tiny"]
    costs: dict[str, float] = {}
    started = time.monotonic()
    assert probe(specs, costs.__setitem__, per_model_s=3) == 3
    assert set(costs) == {"a_tiny", "b_tiny", "z_big"}
    assert time.monotonic() - started < 60
