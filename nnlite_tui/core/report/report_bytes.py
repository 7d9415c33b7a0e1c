"""A report file parsed for the HTML page, its raw samples lifted out of the bytes first.

A report of a fast model carries tens of thousands of raw samples, twice (wall and native clock):
as Python ints they are most of the cost of reading a 10,000-model run. The page needs only the
wall-clock samples, as an array (html_source.sketch), and never the native ones. So the arrays are
cut out of the bytes before the JSON parse (the report keeps an empty list in their place), the
wall-clock samples are read by numpy straight from their text, and the native ones are dropped.

The cut is taken only when it is unambiguous: the key occurs once in the file, its array closes at
the next "]", and after the parse the benchmark block holds the empty list that was left in its
place. Anything else (a key inside a string, a report of another layout, floats numpy cannot read
as integers) falls back to parsing the whole file, the same figures either way.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import orjson

SAMPLES_KEY = b'"samples_ns"'
DROPPED_KEYS = (b'"native_samples_ns"',)  # not shown by the page
_OPEN_ARRAY = re.compile(rb"\s*:\s*\[")


def _cut(data: bytes, key: bytes) -> tuple[bytes, bytes | None]:
    """`data` with the array under `key` emptied, and the array's text; (data, None) when not sure."""
    at = data.find(key)
    if at < 0 or data.rfind(key) != at:  # absent, or more than once: not sure which one is the benchmark's
        return data, None
    opened = _OPEN_ARRAY.match(data, at + len(key))
    if opened is None:
        return data, None
    end = data.find(b"]", opened.end())
    if end < 0:
        return data, None
    return data[: opened.end()] + data[end:], data[opened.end():end]


def numbers(text: bytes) -> np.ndarray:
    """A JSON array's inside (`1, 2, 3`) as an array: int64 when every item is an integer, else float64."""
    if not text.strip():
        return np.empty(0, dtype=np.int64)
    expected = text.count(b",") + 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns, not raises, on text it cannot read to its end
            values = np.fromstring(text, dtype=np.int64, sep=",")
        if len(values) == expected:
            return values
    except (ValueError, DeprecationWarning):
        pass  # not all integers (or not numbers): the JSON parser below decides
    return np.array(orjson.loads(b"[" + text + b"]"), dtype=np.float64)


def _loads(data: bytes, path: Path) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:  # NaN and Infinity, which orjson refuses and reports of older versions may hold
            return json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None


def _as_array(samples: Any) -> np.ndarray:
    if not isinstance(samples, list) or not samples:
        return np.empty(0, dtype=np.int64)
    return np.array(samples, dtype=np.int64 if all(type(s) is int for s in samples) else np.float64)


def _name(key: bytes) -> str:
    return key.decode().strip('"')


def read_report_bytes(path: Path) -> tuple[dict[str, Any], np.ndarray]:
    """The report as JSON with no raw-sample lists in its benchmark block, and its wall-clock samples
    as an array. ValueError names a file that is not JSON or not an nnlite report."""
    data = path.read_bytes()
    slim, text = _cut(data, SAMPLES_KEY)
    cut = [SAMPLES_KEY] if text is not None else []
    for key in DROPPED_KEYS:
        slim, dropped = _cut(slim, key)
        if dropped is not None:
            cut.append(key)
    report = _loads(slim if cut else data, path)
    bench = report.get("benchmark") if isinstance(report, dict) else None
    if cut and (not isinstance(bench, dict) or any(bench.get(_name(key)) != [] for key in cut)):
        report, text = _loads(data, path), None  # a cut in the wrong place: read it all
        bench = report.get("benchmark") if isinstance(report, dict) else None
    if not isinstance(report, dict) or "model_name" not in report:
        raise ValueError(f"{path}: not an nnlite report (no model_name)")
    if not isinstance(bench, dict):
        return report, np.empty(0, dtype=np.int64)
    samples = numbers(text) if text is not None else _as_array(bench.get("samples_ns"))
    for key in (SAMPLES_KEY, *DROPPED_KEYS):
        bench.pop(_name(key), None)
    return report, samples
