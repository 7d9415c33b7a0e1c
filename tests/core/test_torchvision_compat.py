"""The torchvision import shim, each path in a fresh interpreter (it changes process-wide state)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

needs_torchvision = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                       reason="torchvision is not installed")


def _run(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_torchvision
def test_shim_lets_torchvision_import_and_names_the_missing_compiled_ops():
    out = _run("""
        import glob, importlib.util, json, os
        from nnlite_tui.core.convert.worker import torchvision_compat as tc
        import torch
        package = importlib.util.find_spec("torchvision").submodule_search_locations[0]
        mode = tc.prepare()
        extension_loads = True
        try:
            torch.ops.load_library(glob.glob(os.path.join(package, "_C*.so"))[0])
        except OSError:
            extension_loads = False
        import torchvision
        from torchvision import transforms
        y = torchvision.models.resnet18(num_classes=7).eval()(torch.randn(1, 3, 32, 32))
        try:
            torchvision.ops.nms(torch.rand(3, 4), torch.rand(3), 0.5)
            nms = "ran"
        except RuntimeError as e:
            nms = str(tc.explain(e))
        try:
            torch.ops.torchvision.nms(torch.rand(3, 4), torch.rand(3), 0.5)
            direct = "ran"
        except RuntimeError as e:
            direct = str(e)
        print(json.dumps({"mode": mode, "loads": extension_loads, "shape": list(y.shape), "nms": nms,
                          "direct": direct, "normalize": type(transforms.Normalize((0.5,), (0.5,))).__name__}))
    """)
    if out["loads"]:
        pytest.skip("this torchvision's compiled extension loads here: the shim is not needed")
    assert out["mode"] == "shim"
    assert out["shape"] == [1, 7] and out["normalize"] == "Normalize"
    message = ("torchvision's compiled operators are not available in this environment: "
               "install a torchvision build that matches your torch")
    assert out["nms"] == message and out["direct"] == message


@needs_torchvision
def test_without_the_shim_the_import_fails_as_reported_upstream():
    out = _run("""
        import json, torch
        try:
            import torchvision  # noqa: F401
            error = None
        except RuntimeError as e:
            error = str(e)
        print(json.dumps({"error": error, "has_nms": hasattr(torch.ops.torchvision, "nms")}))
    """)
    if out["error"] is None:
        pytest.skip("this torchvision imports by itself here")
    assert "torchvision::nms does not exist" in out["error"]


def test_no_op_when_the_operators_already_exist():
    # As with a torchvision build that matches torch: the schema is registered before prepare().
    out = _run("""
        import json, sys, torch
        lib = torch.library.Library("torchvision", "DEF")
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        from nnlite_tui.core.convert.worker import torchvision_compat as tc
        mode = tc.prepare()
        print(json.dumps({"mode": mode, "shimmed": tc._library is not None}))
    """)
    expected = "native" if importlib.util.find_spec("torchvision") else "absent"
    assert out == {"mode": expected, "shimmed": False}


def test_no_op_when_torchvision_is_absent_or_already_imported():
    out = _run("""
        import json, sys
        from nnlite_tui.core.convert.worker import torchvision_compat as tc
        sys.modules["torchvision"] = object()
        already = tc.prepare()
        del sys.modules["torchvision"]
        sys.path[:] = [p for p in sys.path if "site-packages" not in p]  # as if it were not installed
        absent = tc.prepare()
        print(json.dumps({"already": already, "absent": absent, "shimmed": tc._library is not None,
                          "torch_imported": "torch" in sys.modules}))
    """)
    assert out == {"already": "native", "absent": "absent", "shimmed": False, "torch_imported": False}
