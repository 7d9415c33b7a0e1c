"""ModelSpec: everything needed to build one model in a fresh process, and nothing that needs torch."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME


@dataclass(frozen=True)
class ModelSpec:
    """One model to convert and benchmark.

    kind:
      "lemur"   - `file` defines supported_hyperparameters() and Net(in_shape, out_shape, prm, device);
      "factory" - `file` or `module` plus `factory`: a callable returning (model, example_input).
    `name` is unique within a run; `sha256` is the hash of the source file's bytes.
    """

    name: str
    kind: str
    file: str | None
    sha256: str
    in_shape: tuple[int, ...] = (1, 3, 32, 32)
    out_shape: tuple[int, ...] = (10,)
    prm: dict[str, Any] = field(default_factory=dict)
    module: str | None = None
    factory: str | None = None
    task: str | None = None
    dataset: str | None = None
    transform: str | None = None
    origin: str = ""  # how shapes/prm were chosen, for the report
    # Other input shapes the model's own trials used, in retry order (tried once on "output too small").
    alt_in_shapes: tuple[tuple[int, ...], ...] = ()
    # fp32, or a precision derived from the fp32 artifact (convert/derive.py); the unit's name then
    # ends in "@<precision>". Left out of to_dict()/key() when fp32, so fp32 stores and caches stay as they were.
    precision: str = "fp32"
    # The on-device runtime the unit is converted for and measured in (core/runtimes). Left out of
    # to_dict()/key() for the default, so stores and caches of runs before runtimes existed read as LiteRT.
    runtime: str = DEFAULT_RUNTIME

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["in_shape"] = list(self.in_shape)
        d["out_shape"] = list(self.out_shape)
        d["alt_in_shapes"] = [list(s) for s in self.alt_in_shapes]
        if self.precision == "fp32":
            del d["precision"]
        if self.runtime == DEFAULT_RUNTIME:
            del d["runtime"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ModelSpec":
        d = dict(d)
        d["in_shape"] = tuple(d["in_shape"])
        d["out_shape"] = tuple(d["out_shape"])
        d["alt_in_shapes"] = tuple(tuple(s) for s in d.get("alt_in_shapes") or ())
        return cls(**d)

    def key(self) -> str:
        """A stable hash of what determines the model's graph (source, shapes, prm, entry point)."""
        fields = [self.kind, self.sha256, list(self.in_shape), list(self.out_shape), self.prm, self.module, self.factory]
        if self.precision != "fp32":
            fields.append(self.precision)
        if self.runtime != DEFAULT_RUNTIME:
            fields.append(f"runtime={self.runtime}")
        payload = json.dumps(
            fields,
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
