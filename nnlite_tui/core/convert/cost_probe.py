"""The size of each model before it is converted: parameters and modules, counted on torch's meta device.

Run as a subprocess by conversion_cost.probe(): reads a JSON list of spec dicts on stdin, writes one
JSON line per model ({"name", "params", "modules"} or {"name", "error"}) as it goes. The meta device
allocates no memory and computes nothing, so building a model here costs milliseconds even for a
model whose artifact is 500 MB; only torch is imported (not the converter), and offline like the
conversion worker. A model that cannot be built on the meta device is just not measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys


def _size(spec_dict: dict) -> dict:
    import torch

    from nnlite_tui.core.convert.worker.model import load_module
    from nnlite_tui.core.spec import ModelSpec

    spec = ModelSpec.from_dict(spec_dict)
    module = load_module(spec)

    def build(device):
        with device:
            if spec.kind == "factory":
                return getattr(module, spec.factory)()[0]
            return module.Net(tuple(spec.in_shape), tuple(spec.out_shape), dict(spec.prm), device)

    try:
        model = build(torch.device("meta"))
    except (NotImplementedError, RuntimeError, ValueError, TypeError):
        # The model computes at construction (e.g. a forward to size its classifier): build it for
        # real, minus the weight initialisation that is most of the cost (the values do not matter).
        with _no_init(torch):
            model = build(torch.device("cpu"))
    params = int(sum(p.numel() for p in model.parameters()))
    modules = sum(1 for m in model.modules() if not list(m.children()))
    return {"name": spec.name, "params": params, "modules": modules}


@contextlib.contextmanager
def _no_init(torch):
    init = torch.nn.init
    names = [n for n in dir(init) if n.endswith("_") and not n.startswith("_") and callable(getattr(init, n))]
    saved = {n: getattr(init, n) for n in names}
    try:
        for n in names:
            setattr(init, n, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for n, fn in saved.items():
            setattr(init, n, fn)


def main() -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    from nnlite_tui.core.convert.worker import offline, torchvision_compat

    torch.set_num_threads(1)
    torchvision_compat.prepare()
    offline.enforce()
    out = sys.stdout
    sys.stdout = sys.stderr  # a model's prints must not mix with the answers
    for spec_dict in json.load(sys.stdin):
        try:
            line = _size(spec_dict)
        except BaseException as exc:  # any model code may raise anything; that model stays unmeasured
            if isinstance(exc, KeyboardInterrupt):
                raise
            line = {"name": spec_dict.get("name"), "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        out.write(json.dumps(line) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
