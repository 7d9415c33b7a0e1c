"""The file of check inputs a job's process hands to the artifact check is crafted data: only plain
numeric arrays under the expected names are read, never a pickle; a link or FIFO in its place is refused
without blocking."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

from nnlite_tui.core.convert import check_inputs, intake


class Boom:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def _npz(**arrays) -> io.BytesIO:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    return buf


def test_what_the_job_writes_reads_back(tmp_path):
    samples = [[np.ones((1, 8, 8, 3), np.float32), np.arange(4)], [np.zeros((1, 8, 8, 3), np.float32), np.arange(4)]]
    refs = [[np.full((1, 10), 2.0, np.float32)], [np.full((1, 10), 3.0, np.float32)]]
    path = str(tmp_path / "a.tflite") + check_inputs.SUFFIX
    check_inputs.write(path, samples, refs, stochastic=False)
    with open(path, "rb") as f:
        got = check_inputs.read(f)
    assert got.stochastic is False and len(got.samples) == 2 and len(got.references) == 2
    assert np.array_equal(got.samples[1][1], np.arange(4)) and float(got.references[1][0][0, 0]) == 3.0


@pytest.mark.parametrize("make, says", [
    (lambda: _npz(in_0_0=np.array([Boom()], dtype=object), ref_0_0=np.ones(2), stochastic=np.array(False)),
     "not a plain .npz"),
    (lambda: _npz(in_0_0=np.ones(2), ref_0_0=np.array(["a"]), stochastic=np.array(False)), "holds"),
    (lambda: _npz(in_0_0=np.ones(2), ref_0_0=np.ones(2)), "no stochastic flag"),
    (lambda: _npz(in_0_0=np.ones(2), ref_0_0=np.ones(2), stochastic=np.array(1)), "no stochastic flag"),
    (lambda: _npz(in_0_0=np.ones(2), ref_0_0=np.ones(2), __import__=np.ones(1), stochastic=np.array(False)),
     "an array named"),
    (lambda: _npz(in_0_0=np.ones(2), in_2_0=np.ones(2), ref_0_0=np.ones(2), ref_2_0=np.ones(2),
                  stochastic=np.array(False)), "numbered"),
    (lambda: _npz(in_0_0=np.ones(2), stochastic=np.array(False)), "checks of inputs"),
    (lambda: io.BytesIO(pickle.dumps(Boom())), "not a plain .npz"),
    (lambda: io.BytesIO(b"PK\x03\x04" + os.urandom(200)), "not a plain .npz"),
])
def test_anything_else_is_unreadable_and_nothing_is_unpickled(make, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(check_inputs.Unreadable, match=says):
        check_inputs.read(make())
    assert not (tmp_path / "PWNED").exists()


def test_a_pickled_member_inside_a_zip_is_not_loaded(tmp_path, monkeypatch):
    """An .npy member whose header says object dtype: numpy would unpickle it unless told not to."""
    monkeypatch.chdir(tmp_path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        member = io.BytesIO()
        np.save(member, np.array([Boom()], dtype=object), allow_pickle=True)
        z.writestr("ref_0_0.npy", member.getvalue())
        z.writestr("in_0_0.npy", _npy(np.ones(2)))
        z.writestr("stochastic.npy", _npy(np.array(False)))
    buf.seek(0)
    with pytest.raises(check_inputs.Unreadable):
        check_inputs.read(buf)
    assert not (tmp_path / "PWNED").exists()


def _npy(a: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, a)
    return out.getvalue()


@pytest.mark.parametrize("kind, says", [("fifo", "a FIFO"), ("symlink", "not openable"), ("hardlink", "2 hard links"),
                                        ("missing", "missing")])
def test_the_check_file_is_opened_only_as_a_plain_file(tmp_path, kind, says):
    target = tmp_path / "host_secret"
    target.write_bytes(b"secret")
    name = "m.tflite" + check_inputs.SUFFIX
    if kind == "fifo":
        os.mkfifo(tmp_path / name)  # a blocking open() would hang the runner here
    elif kind == "symlink":
        (tmp_path / name).symlink_to(target)
    elif kind == "hardlink":
        os.link(target, tmp_path / name)
    with pytest.raises(intake.Refused, match=says):
        intake.open_plain(tmp_path, __import__("pathlib").Path(name), check_inputs.MAX_BYTES)
