"""The check inputs and PyTorch's outputs on them, as the job's process hands them to the artifact check.

The process that ran the model's code has PyTorch's side of the validation: the seeded check inputs
as the artifact takes them and the eager outputs on them. It writes them as plain arrays (an
uncompressed .npz, `np.savez`) next to its artifact; a process that never ran model code (the
artifact check, worker/artifact_check.py) reads them with `allow_pickle=False`, runs the artifact on
the inputs and compares. So a model can lie only about PyTorch's side of its own comparison, never
about what the artifact computes.

Everything in the file is treated as crafted: only numeric arrays under the names below, at most
MAX_CHECKS checks of MAX_ARRAYS arrays each, numbered without gaps, within MAX_BYTES.

Pure numpy: imported by the worker (which has torch) and by the runner (which must not).
"""

from __future__ import annotations

import re
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

SUFFIX = ".check.npz"  # next to the artifact: <artifact><SUFFIX>
MAX_BYTES = 2**29  # 512 MiB: two checks of a large segmentation model's inputs and outputs fit
MAX_CHECKS, MAX_ARRAYS = 8, 64
STOCHASTIC = "stochastic"  # a 0-d bool array: the model draws random numbers at inference
_NAME = re.compile(r"^(in|ref)_(\d{1,2})_(\d{1,2})$")


class Unreadable(ValueError):
    """The check file is not what the job's process must write; the message says why."""


@dataclass(frozen=True)
class CheckInputs:
    samples: list[list[np.ndarray]]  # per check, the inputs as the artifact takes them
    references: list[list[np.ndarray]]  # per check, PyTorch's outputs
    stochastic: bool  # PyTorch's outputs vary from run to run: only their shapes can be compared


def write(path: str, samples: list[list[np.ndarray]], references: list[list[np.ndarray]], stochastic: bool) -> None:
    arrays = {f"in_{i}_{j}": np.ascontiguousarray(a) for i, s in enumerate(samples) for j, a in enumerate(s)}
    arrays |= {f"ref_{i}_{k}": np.ascontiguousarray(a) for i, r in enumerate(references) for k, a in enumerate(r)}
    arrays[STOCHASTIC] = np.array(bool(stochastic))
    save: Any = np.savez  # numpy's stubs read **arrays as its keyword flags
    with open(path, "wb") as f:
        save(f, allow_pickle=False, **arrays)


def read(file: IO[bytes]) -> CheckInputs:
    """The arrays of an open check file; Unreadable for anything else (never unpickles)."""
    try:
        with np.load(file, allow_pickle=False) as npz:
            names = list(npz.files)
            if len(names) > 2 * MAX_CHECKS * MAX_ARRAYS + 1:
                raise Unreadable(f"{len(names)} arrays")
            stochastic = _flag(npz[STOCHASTIC]) if STOCHASTIC in names else None
            if stochastic is None:
                raise Unreadable("no stochastic flag")
            found: dict[str, dict[int, dict[int, np.ndarray]]] = {"in": {}, "ref": {}}
            for name in names:
                if name == STOCHASTIC:
                    continue
                m = _NAME.match(name)
                if m is None:
                    raise Unreadable(f"an array named {name[:40]!r}")
                kind, i, j = m.group(1), int(m.group(2)), int(m.group(3))
                found[kind].setdefault(i, {})[j] = _numeric(npz[name], name)
    except Unreadable:
        raise
    except (ValueError, OSError, EOFError, KeyError, NotImplementedError, zipfile.BadZipFile, zlib.error) as exc:
        raise Unreadable(f"not a plain .npz of arrays ({type(exc).__name__}: {str(exc)[:120]})") from None
    samples, references = _numbered(found["in"], "input"), _numbered(found["ref"], "output")
    if len(samples) != len(references) or not samples:
        raise Unreadable(f"{len(samples)} checks of inputs, {len(references)} of outputs")
    return CheckInputs(samples, references, stochastic)


def _flag(value: np.ndarray) -> bool | None:
    return bool(value) if value.dtype == np.bool_ and value.shape == () else None


def _numeric(value: np.ndarray, name: str) -> np.ndarray:
    if value.dtype.kind not in "biufc":  # no objects, strings, records
        raise Unreadable(f"{name} holds {value.dtype.str} values")
    return value


def _numbered(by_check: dict[int, dict[int, np.ndarray]], what: str) -> list[list[np.ndarray]]:
    if sorted(by_check) != list(range(len(by_check))) or len(by_check) > MAX_CHECKS:
        raise Unreadable(f"{what} checks numbered {sorted(by_check)[:10]}")
    out = []
    for i in range(len(by_check)):
        arrays = by_check[i]
        if sorted(arrays) != list(range(len(arrays))) or not 0 < len(arrays) <= MAX_ARRAYS:
            raise Unreadable(f"check {i}'s {what}s numbered {sorted(arrays)[:10]}")
        out.append([arrays[j] for j in range(len(arrays))])
    return out
