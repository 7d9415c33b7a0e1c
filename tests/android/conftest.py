"""Fixtures for checking the Android app's protocol from Python (android-app/PROTOCOL.md).

`core_out` runs android-app/test-core.sh --fixtures-only: the app's real Kotlin core, compiled
with kotlinc on this JVM, writes its statistics, protocol loops and reports for the tests here to
compare with nnlite_tui.core and to validate against the JSON Schema. The script compiles only
when a Kotlin source changed, so after .ci/run has run it this costs a JVM start.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

ANDROID_APP = Path(__file__).resolve().parents[2] / "android-app"
SCHEMA_PATH = ANDROID_APP / "protocol" / "report.schema.json"
SAMPLES_PATH = ANDROID_APP / "protocol" / "fixtures" / "sample-timings.json"


@pytest.fixture(scope="session")
def report_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@pytest.fixture(scope="session")
def validator(report_schema) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(report_schema)
    return jsonschema.Draft202012Validator(report_schema)


@pytest.fixture(scope="session")
def core_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("core-out")
    proc = subprocess.run(
        ["bash", str(ANDROID_APP / "test-core.sh"), "--fixtures-only", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env={**os.environ},
    )
    assert proc.returncode == 0, f"test-core.sh failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return out


@pytest.fixture(scope="session")
def kotlin_reports(core_out) -> dict[str, dict]:
    reports = {p.stem: json.loads(p.read_text()) for p in sorted((core_out / "reports").glob("*.json"))}
    assert reports, "the Kotlin core wrote no reports"
    return reports


@pytest.fixture(scope="session")
def tiny_tflite(tmp_path_factory) -> Path:
    """A real .tflite from litert_torch (a ~5 s import, once per session)."""
    os.environ.setdefault("LITERT_TORCH_SHOW_PROGRESS", "n")
    import litert_torch
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.fc = torch.nn.Linear(4, 5)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tflite") / "tiny.tflite"
    litert_torch.convert(Tiny().eval(), (torch.randn(1, 3, 16, 16),)).export(str(path))
    return path


TINY_PTE = """
import sys, torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x.permute(0, 3, 1, 2))).mean(dim=(2, 3)))

torch.manual_seed(0)
program = torch.export.export(Tiny().eval(), (torch.randn(1, 16, 16, 3),))
with open(sys.argv[1], "wb") as fh:
    to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch().write_to_file(fh)
"""


@pytest.fixture(scope="session")
def tiny_pte(tmp_path_factory) -> Path:
    """A real .pte lowered to XNNPACK (in a subprocess: executorch.exir's import stays out of the tests')."""
    import sys

    path = tmp_path_factory.mktemp("pte") / "tiny.pte"
    done = subprocess.run([sys.executable, "-c", TINY_PTE, str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return path
