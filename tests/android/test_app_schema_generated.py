"""android-app/protocol/report.schema.json is generated from the typed app report
(core/results/app_report.py), so the app, the simulator and the host's model cannot drift; and the
model's own validation agrees with the schema on hand-made reports either side of a constraint."""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import ValidationError

from nnlite_tui.core.results.app_report import AppReport
from nnlite_tui.core.results.schema import app_schema, app_schema_text
from tests.android.conftest import SCHEMA_PATH

STATS = {"count": 3, "mean_ns": 10.0, "median_ns": 10.0, "p90_ns": 11.0, "p99_ns": 11.0, "std_ns": 0.5,
         "min_ns": 9.0, "max_ns": 11.0}
DEVICE = {"manufacturer": "m", "model": "m", "brand": "b", "device": "d", "product": "p", "board": "b",
          "hardware": "h", "soc_manufacturer": None, "soc_model": None, "abis": ["arm64-v8a"], "sdk_int": 35,
          "release": "15", "build_id": "x", "fingerprint": "f"}
# A protocol-1 valid report: the fewest keys a valid report can have.
VALID_V1 = {"protocol_version": 1, "app_version": "0.1.0", "simulated": True, "valid": True, "error_stage": None,
            "error_type": None, "error_message": None, "run_id": "r1", "model_path": "/data/m.tflite",
            "backend_requested": "cpu", "backend_used": "cpu", "threads": 1, "warmup": 0, "runs": 3,
            "min_seconds": 0.0, "seed": 0, "fallback_reason": None, "started_at_ms": 1, "finished_at_ms": 2,
            "device": DEVICE, "init_ns": 5, "first_inference_ns": 7, "stats": STATS, "samples_ns": [9, 10, 11],
            "timed_seconds": 3e-8, "input_shapes": [[1, 3]], "input_dtypes": ["float32"], "output_shapes": [[1, 2]]}


def test_the_committed_app_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text() == app_schema_text(), (
        "regenerate: python -m nnlite_tui.core.results.schema app > android-app/protocol/report.schema.json")


@pytest.mark.parametrize(("change", "holds"), [
    ({}, True),
    ({"stats": {**STATS, "count": 0}}, False),  # Stats.count >= 1
    ({"samples_ns": []}, False),  # at least one timed run
    ({"samples_ns": [9, -1, 11]}, False),  # a duration is never negative
    ({"app_version": "one"}, False),  # the version's pattern
    ({"device": {**DEVICE, "abis": []}}, False),
    ({"device": {**DEVICE, "extra": 1}}, False),  # a closed block
    ({"backend_used": "tpu"}, False),
    ({"error_stage": "later"}, False),
])
def test_the_model_and_the_schema_agree_on_each_field_constraint(change, holds):
    report = {**VALID_V1, **change}
    schema_holds = not list(jsonschema.Draft202012Validator(app_schema()).iter_errors(report))
    try:
        AppReport.model_validate(report)
        model_holds = True
    except ValidationError:
        model_holds = False
    assert (schema_holds, model_holds) == (holds, holds)


def test_a_valid_report_with_an_error_fails_only_the_cross_key_rules():
    """The rules between keys (valid => no error) live on the model as schema, not as field types."""
    report = {**VALID_V1, "error_stage": "load", "error_type": "E", "error_message": "m"}
    AppReport.model_validate(report)
    messages = [e.message for e in jsonschema.Draft202012Validator(app_schema()).iter_errors(report)]
    assert messages and all("None was expected" in m for m in messages), messages
