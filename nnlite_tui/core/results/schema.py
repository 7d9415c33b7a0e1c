"""The JSON Schemas generated from the typed models: the report's (model.py), for anyone reading reports
without nnlite (LEMUR's importer, a notebook), and the app's (app_report.py), the report the Android app
and the device simulator write, which their tests are checked against.

    python -m nnlite_tui.core.results.schema > docs/reference/report.schema.json
    python -m nnlite_tui.core.results.schema app > android-app/protocol/report.schema.json

tests/results/test_report_schema.py and tests/android/test_app_schema_generated.py check that the committed
files are what this prints. The report's blocks are open (`additionalProperties` is not false): a runtime's
or a measurement's own keys ride along; the app's report is closed, as PROTOCOL.md specifies it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from pydantic.json_schema import JsonDict

from nnlite_tui.core.results.app_blocks import SHARED_BLOCKS
from nnlite_tui.core.results.app_report import PROTOCOL_VERSION, AppReport
from nnlite_tui.core.results.model import SCHEMA, SCHEMA_VERSION, Report

SCHEMA_ID = f"urn:nnlite:report:{SCHEMA_VERSION}"
APP_SCHEMA_ID = f"urn:nnlite:bench:report:{PROTOCOL_VERSION}"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
JsonNode = Any  # a piece of a JSON Schema: object, list or scalar


def report_schema() -> JsonDict:
    schema = Report.model_json_schema(by_alias=True, mode="serialization")
    return {"$schema": DRAFT, "$id": SCHEMA_ID, **schema, "title": f"{SCHEMA} version {SCHEMA_VERSION}"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def app_schema() -> JsonDict:
    """The app's report schema: the blocks several keys share are named $defs (snake_case, as PROTOCOL.md calls
    them), every other block is written in place; a nullable key reads `"type": [t, "null"]`."""
    schema = AppReport.model_json_schema(mode="validation")
    defs = schema.pop("$defs")
    shared = [cls.__name__ for cls in SHARED_BLOCKS]

    def tidy(node: JsonNode, in_properties: bool = False) -> JsonNode:
        if isinstance(node, list):
            return [tidy(item) for item in node]
        if not isinstance(node, dict):
            return node
        if in_properties:  # a map of key names to schemas: every key is a name, not a keyword
            return {key: tidy(value) for key, value in node.items()}
        ref = node.get("$ref", "").removeprefix("#/$defs/")
        if ref and ref not in shared:
            node = {**defs[ref], **{k: v for k, v in node.items() if k != "$ref"}}
        elif ref:
            node = {**node, "$ref": f"#/$defs/{snake(ref)}"}
        node = {key: tidy(value, key == "properties") for key, value in node.items()
                if key not in ("title", "default")}
        if isinstance(node.get("description"), str):  # a docstring's line breaks are not the text's
            node["description"] = " ".join(node["description"].split())
        return without_null_branch(node)

    body = tidy(schema)
    return {"$schema": DRAFT, "$id": APP_SCHEMA_ID,
            "title": f"NNLite on-device benchmark report (protocol_version {PROTOCOL_VERSION})", **body,
            "$defs": {snake(name): tidy(defs[name]) for name in shared}}


def without_null_branch(node: JsonDict) -> JsonDict:
    """`anyOf: [X, null]` as X allowing null: a type list, an enum with null, or `oneOf` for a named block."""
    branches = node.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches):
        return node
    other = next(b for b in branches if b != {"type": "null"})
    if not isinstance(other, dict):  # a schema is an object; pydantic writes no other branch
        return node
    inner = dict(other)
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    enum = inner.get("enum")
    if isinstance(enum, list):
        inner.pop("type", None)
        return {**rest, **inner, "enum": [*enum, None]}
    if isinstance(inner.get("type"), str) and "$ref" not in inner:
        return {**rest, **inner, "type": [inner["type"], "null"]}
    return {**rest, "oneOf": [inner, {"type": "null"}]}


def schema_text() -> str:
    return json.dumps(report_schema(), indent=1, sort_keys=True) + "\n"


def app_schema_text() -> str:
    return json.dumps(app_schema(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(app_schema_text() if sys.argv[1:] == ["app"] else schema_text())
