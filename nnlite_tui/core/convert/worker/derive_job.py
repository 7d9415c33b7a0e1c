"""A derivation job as a runtime's `derive` reads it: the fields convert/derive.py writes (and the
pool adds `out_path`), read from the job's JSON once, with their types checked.

The job itself stays the JSON it came as: the worker's shared derivation steps
(convert/worker/derivation.py) read the rest of it (weights, measured_graph, log_path).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nnlite_tui.core.spec import ModelSpec

CALIBRATION_SAMPLES = 32  # when the job does not say


def _text(job: Mapping[str, object], key: str) -> str:
    value = job.get(key)
    if not isinstance(value, str):
        raise ValueError(f"the derivation job's {key} is {value!r}, not a path")
    return value


@dataclass(frozen=True)
class DeriveJob:
    spec: ModelSpec
    fp32_path: str
    out_path: str
    nhwc: bool  # the fp32 artifact's layout is NHWC
    calibration_samples: int
    calibration_dir: str | None
    pt2e: bool  # may try the PT2E route when the recipe's int8 is degraded (LiteRT)

    @classmethod
    def of(cls, job: Mapping[str, object]) -> DeriveJob:
        spec = job.get("spec")
        if not isinstance(spec, dict):
            raise ValueError(f"the derivation job's spec is {spec!r}")
        calibration = job.get("calibration")
        settings: Mapping[str, object] = calibration if isinstance(calibration, dict) else {}
        samples, directory = settings.get("samples"), settings.get("dir")
        return cls(spec=ModelSpec.from_dict(spec), fp32_path=_text(job, "fp32_path"), out_path=_text(job, "out_path"),
                   nhwc=job.get("layout") == "NHWC",
                   calibration_samples=int(samples) if isinstance(samples, (int, float, str)) and samples
                   else CALIBRATION_SAMPLES,
                   calibration_dir=directory if isinstance(directory, str) else None,
                   pt2e=bool(job.get("pt2e", True)))
