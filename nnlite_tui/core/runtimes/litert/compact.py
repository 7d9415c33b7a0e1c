"""Smaller quantized .tflite files at no cost in accuracy: identical int64 vectors stored once.

A per-channel quantized tensor carries one float32 scale and one int64 zero point per channel
(TFLite's schema types zero_point as [long]). Symmetric int8 weights and their int32 biases have
all-zero zero points, and the interpreter refuses a zero_point vector shorter than the scale vector
("QuantizationParam has 1 zero_point values and N scale values. Must have same number."), so the
zeros cannot be dropped; but a flatbuffer may point any number of tables at one vector, and a
conv's weights and bias (and every layer of the same width) have the very same zeros. On
efficientnet_mini they were 16% of the int8 file. Nothing the interpreter reads changes.

ai-edge-quantizer writes the tensor data after the flatbuffer (buffer offset/size); the rewrite
stores it inline, 16-byte aligned as TFLite's own writer does, so it is only done below
INLINE_LIMIT (a flatbuffer cannot exceed 2 GiB). Runs in the conversion worker.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict

INLINE_LIMIT = 1 << 30
DATA_ALIGNMENT = 16


def _builder_class():
    import flatbuffers
    import numpy as np

    class SharingBuilder(flatbuffers.Builder):
        """Writes each distinct int64 vector once; uint8 vectors (tensor data) 16-byte aligned."""

        head: int  # flatbuffers.Builder's write position

        def __init__(self, size: int):
            super().__init__(size)
            self.shared: dict[bytes, int] = {}
            self.shared_hits = 0

        def CreateNumpyVector(self, x):  # noqa: N802 - flatbuffers' name
            if x.dtype == np.int64 and x.ndim == 1:
                key = x.astype("<i8").tobytes()
                if key in self.shared:
                    self.shared_hits += 1
                    return self.shared[key]
                offset = self.shared[key] = self._vector(x, x.dtype.alignment)
                return offset
            if x.dtype == np.uint8 and x.ndim == 1:
                return self._vector(x, DATA_ALIGNMENT)
            return super().CreateNumpyVector(x)

        def _vector(self, x, alignment: int) -> int:
            payload = x.astype(x.dtype.newbyteorder("<")).tobytes(order="C")
            self.StartVector(x.itemsize, x.size, alignment)
            self.head = self.head - len(payload)
            self.Bytes[self.head:self.head + len(payload)] = payload
            self.vectorNumElems = x.size
            return self.EndVector()

    return SharingBuilder


class _CompactCommon(TypedDict):
    bytes_before: int
    bytes_after: int


class Compaction(_CompactCommon, total=False):
    """What compact() did, for the conversion record."""

    skipped: str  # why the file was left as written
    shared_vectors: int


class CompactFailed(TypedDict):
    error: str  # why the file could not be rewritten (it stays as the quantizer wrote it)


def compact(path: str | os.PathLike[str]) -> Compaction:
    """Rewrite `path` in place with shared int64 vectors; what it did, for the conversion record."""
    import numpy as np
    from ai_edge_litert import schema_py_generated as schema

    path = Path(path)
    data = path.read_bytes()
    before = len(data)
    if before >= INLINE_LIMIT:
        return {"bytes_before": before, "bytes_after": before, "skipped": f"file of {before} bytes: left as written"}
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    for buffer in model.buffers or []:
        if buffer.offset and buffer.offset > 1:  # data appended after the flatbuffer: bring it inline
            buffer.data = np.frombuffer(data[buffer.offset:buffer.offset + buffer.size], dtype=np.uint8)
            buffer.offset = buffer.size = 0
    builder = _builder_class()(before + 1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    out = bytes(builder.Output())
    if len(out) >= before:  # nothing to share (e.g. an fp16 file): keep the original bytes
        return {"bytes_before": before, "bytes_after": before, "shared_vectors": builder.shared_hits}
    tmp = path.with_name(path.name + ".compact")
    tmp.write_bytes(out)
    os.replace(tmp, path)
    return {"bytes_before": before, "bytes_after": len(out), "shared_vectors": builder.shared_hits}
