"""ModelSpec: everything needed to build one model in a fresh process, and nothing that needs torch."""

from __future__ import annotations

import hashlib
import json
from copy import deepcopy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME


class _SpecNonDefault(TypedDict, total=False):
    precision: str  # left out when fp32
    runtime: str  # left out for the default runtime


class SpecDict(_SpecNonDefault):
    """A ModelSpec as JSON (a worker job's `spec`, the store's models, a report's `spec`)."""
    name: str
    kind: str
    file: str | None
    sha256: str
    in_shape: list[int]
    out_shape: list[int]
    prm: dict[str, Any]
    module: str | None
    factory: str | None
    task: str | None
    dataset: str | None
    transform: str | None
    origin: str
    alt_in_shapes: list[list[int]]


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

    def to_dict(self) -> SpecDict:
        d = SpecDict(name=self.name, kind=self.kind, file=self.file, sha256=self.sha256, in_shape=list(self.in_shape),
                     out_shape=list(self.out_shape), prm=deepcopy(self.prm), module=self.module, factory=self.factory,
                     task=self.task, dataset=self.dataset, transform=self.transform, origin=self.origin,
                     alt_in_shapes=[list(s) for s in self.alt_in_shapes])
        if self.precision != "fp32":
            d["precision"] = self.precision
        if self.runtime != DEFAULT_RUNTIME:
            d["runtime"] = self.runtime
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ModelSpec":
        """A spec from its JSON (to_dict()'s, or an older release's: any field with a default may be absent)."""
        fields = dict(d)
        fields["in_shape"] = tuple(fields["in_shape"])
        fields["out_shape"] = tuple(fields["out_shape"])
        fields["alt_in_shapes"] = tuple(tuple(s) for s in fields.get("alt_in_shapes") or ())
        return cls(**fields)

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
