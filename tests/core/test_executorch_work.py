"""An ExecuTorch program's multiply-accumulate work, read from the .pte (runtimes/executorch/work.py):
from XNNPACK's own graph in each partition and from the KernelCalls left on ExecuTorch's kernels,
checked against a count by hand, and a conversion's compute check measured instead of unmeasured."""

from __future__ import annotations

import pytest

pytest.importorskip("executorch")
torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow


class Mixed(torch.nn.Module):
    """A 3x3 conv, a depthwise conv, a transposed conv, a linear layer and a batched product."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, groups=8)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.fc = torch.nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        y = self.depthwise(torch.relu(self.conv(x)))
        flat = y.flatten(2)
        return self.fc(y.flatten(1)), self.up(y).sum() + torch.bmm(flat, flat.transpose(1, 2)).sum()


# By hand, a multiply-add counted 2, on a 1x3x8x8 input:
BY_HAND = {
    "conv": 2 * (8 * 8 * 8) * (3 * 3 * 3),  # output 8x8x8, each a 3x3 window over 3 channels: 27648
    "depthwise": 2 * (8 * 6 * 6) * (3 * 3),  # output 8x6x6, a 3x3 window over its own channel: 5184
    "up": 2 * (8 * 6 * 6) * (2 * 2 * 4),  # each input element spreads over 2x2 outputs of 4 channels: 9216
    "fc": 2 * 10 * 288,  # 5760
    "bmm": 2 * (8 * 8) * 36,  # (8x36) @ (36x8): 4608
}


def _program(tmp_path, partitioned: bool):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge, to_edge_transform_and_lower

    exported = torch.export.export(Mixed().eval(), (torch.randn(1, 3, 8, 8),))
    edge = (to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]) if partitioned
            else to_edge(exported))
    path = tmp_path / f"mixed-{'xnnpack' if partitioned else 'portable'}.pte"
    path.write_bytes(edge.to_executorch().buffer)
    return str(path)


def test_the_work_of_xnnpack_partitions_and_of_portable_kernels_is_the_count_by_hand(tmp_path):
    from nnlite_tui.core.runtimes.executorch.work import mac_work

    delegated = mac_work(_program(tmp_path, partitioned=True))
    assert delegated["flops"] == sum(BY_HAND.values()) == 52416, delegated
    assert delegated["flops_by_op"] == {
        "XNNConv2d": BY_HAND["conv"], "XNNDepthwiseConv2d": BY_HAND["depthwise"],
        "XNNConvTranspose2d": BY_HAND["up"], "XNNFullyConnected": BY_HAND["fc"],
        "XNNBatchMatrixMultiply": BY_HAND["bmm"]}
    portable = mac_work(_program(tmp_path, partitioned=False))  # nothing delegated: every op a KernelCall
    assert portable["flops"] == 52416, portable
    assert portable["flops_by_op"] == {"aten::convolution": BY_HAND["conv"] + BY_HAND["depthwise"] + BY_HAND["up"],
                                       "aten::addmm": BY_HAND["fc"], "aten::bmm": BY_HAND["bmm"]}


def test_a_file_that_is_not_a_program_leaves_the_check_unmeasured_with_the_reason(tmp_path):
    from nnlite_tui.core.runtimes.executorch.work import mac_work

    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"not a program")
    work = mac_work(str(bad))
    assert work["flops"] is None and str(bad) in work["flops_unmeasured"]


def test_an_executorch_conversion_measures_its_compute_check(tmp_path):
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover
    from tests.conftest import REPO

    spec = discover([str(REPO / "sample_models" / "plain_cnn.py")])[0]
    result = convert_one(spec, str(tmp_path / "plain_cnn.pte"), get_runtime("executorch"))
    check = result["compute_check"]
    assert check["verdict"] == "ok" and check["ratio"] == pytest.approx(1.0, abs=0.02), check
    assert check["artifact_flops"] == result["flops"] > 0


def test_executorch_keeps_the_work_of_zero_initialised_weights_as_built(tmp_path):
    """The README's claim: where LiteRT's converter folds a zero-init ResNet's residual branches away
    (tests/core/test_fidelity_convert.py), ExecuTorch's program keeps every convolution's work."""
    import json
    import subprocess
    import sys

    from tests.conftest import FIXTURES, REPO

    done = subprocess.run([sys.executable, "-m", "nnlite_tui", "convert",
                           f"{FIXTURES / 'fidelity' / 'resnet_zero_init.py'}:make", "--runtime", "executorch",
                           "--weights", "as-built", "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*@executorch.json")]
    check = record["compute_check"]
    assert check["verdict"] == "ok" and check["ratio"] == pytest.approx(1.0, abs=0.02), check
    assert check["artifact_by_op"]["XNNConv2d"] == pytest.approx(check["model_by_op"]["aten.convolution"], rel=0.02)
