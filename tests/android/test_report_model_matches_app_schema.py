"""The typed report model (core/results/model.py) and the app's report schema
(android-app/protocol/report.schema.json) name the same benchmark keys: every key the model declares
for the device's result is one the app writes, or one the host adds after the device's rounds."""

from __future__ import annotations

from pydantic import BaseModel

from nnlite_tui.core.results.model import Benchmark, Conditions, EnergyBlock, OpsBlock, Stats

# Written by the host around the device's result (bench/rounds.py combine, run/pipeline.py).
HOST_ADDED = {"median_ns", "interval", "stability", "rounds", "settings"}


def declared(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def test_benchmark_keys_are_the_app_s_or_the_host_s(report_schema):
    app = set(report_schema["properties"])
    assert declared(Benchmark) - HOST_ADDED <= app, declared(Benchmark) - HOST_ADDED - app
    assert not HOST_ADDED & app  # a key both sides wrote would have two meanings


def test_the_blocks_keys_are_the_app_s(report_schema):
    defs, props = report_schema["$defs"], report_schema["properties"]
    assert declared(Stats) == set(defs["stats"]["properties"])
    assert declared(EnergyBlock) <= set(defs["energy_block"]["properties"])
    assert declared(OpsBlock) - {"flops"} <= set(defs["ops_block"]["properties"])  # flops: the host's graph count
    assert declared(Conditions) <= set(props["conditions"]["properties"])
