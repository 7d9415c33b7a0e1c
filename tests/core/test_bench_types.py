"""The typed blocks of core/bench name the keys their producers write: a field added to one side only
would otherwise leave the type (or the JSON) behind."""

from dataclasses import asdict, fields

from nnlite_tui.core.bench.block import MemoryFigures, Stats
from nnlite_tui.core.bench.memory import memory_snapshot
from nnlite_tui.core.bench.settings import BenchSettings, SettingsDict
from nnlite_tui.core.bench.stats import STAT_KEYS, summarize


def test_settings_dict_is_every_field_in_order():
    assert list(SettingsDict.__annotations__) == [f.name for f in fields(BenchSettings)]
    settings = BenchSettings(runs=7, backend="cpu", profile_ops="both", energy=True)
    assert list(settings.to_dict().items()) == list(asdict(settings).items())


def test_stats_keys_are_the_protocols():
    assert tuple(Stats.__annotations__) == STAT_KEYS
    assert tuple(summarize([3, 1, 2])) == STAT_KEYS


def test_memory_figures_keys():
    assert tuple(memory_snapshot()) == tuple(MemoryFigures.__annotations__)
