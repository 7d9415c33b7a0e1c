"""docs/reference/report.schema.json is generated from the typed model, and reports hold to it: the
current fixture's files as written, every earlier schema's once read as today's."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from nnlite_tui.core.results import read_report
from nnlite_tui.core.results.schema import report_schema, schema_text

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "reference" / "report.schema.json"
RUNS = REPO / "tests" / "fixtures" / "runs"


def test_the_committed_schema_is_the_generated_one():
    assert COMMITTED.read_text() == schema_text(), (
        "regenerate: python -m nnlite_tui.core.results.schema > docs/reference/report.schema.json")


def test_reports_of_every_schema_hold_to_it():
    validator = jsonschema.Draft202012Validator(report_schema())
    files = sorted(RUNS.glob("*/reports/*.json"))
    assert len(files) >= 9
    for path in files:
        raw = json.loads(path.read_text())
        report = read_report(path)
        if report.upgraded_from is None:
            assert not list(validator.iter_errors(raw)), path
        assert not list(validator.iter_errors(report.to_json())), path
    broken = {**json.loads(files[0].read_text()), "valid": "yes"}
    assert list(validator.iter_errors(broken))
