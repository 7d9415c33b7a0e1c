"""The report's JSON Schema, generated from the typed model (model.py): what a report file holds,
for anyone reading reports without nnlite (LEMUR's importer, a notebook).

    python -m nnlite_tui.core.results.schema > docs/reference/report.schema.json

tests/results/test_report_schema.py checks that the committed file is what this prints. Blocks are
open (`additionalProperties` is not false): a runtime's or a measurement's own keys ride along.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from nnlite_tui.core.results.model import SCHEMA, SCHEMA_VERSION, Report

SCHEMA_ID = f"urn:nnlite:report:{SCHEMA_VERSION}"


def report_schema() -> dict[str, Any]:
    schema = Report.model_json_schema(by_alias=True, mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            **schema, "title": f"{SCHEMA} version {SCHEMA_VERSION}"}


def schema_text() -> str:
    return json.dumps(report_schema(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
