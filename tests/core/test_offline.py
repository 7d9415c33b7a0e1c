"""The conversion worker's offline rules, applied in a fresh interpreter (they patch the process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from nnlite_tui.core.convert.worker.offline import DOWNLOADS
from tests.conftest import REPO


def _run(code: str, tmp_path) -> dict:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "TORCH_HOME": str(tmp_path / "torch-home")}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_outbound_connections_and_downloads_are_refused_at_once_loopback_is_not(tmp_path):
    out = _run("""
        import json, os, socket, time, urllib.request
        from nnlite_tui.core.convert.worker import offline
        offline.enforce()
        server = socket.create_server(("127.0.0.1", 0))
        port = server.getsockname()[1]
        local = socket.create_connection(("127.0.0.1", port), timeout=5)
        local.close()
        results = {}
        t0 = time.monotonic()
        for name, call in {
            "connect": lambda: socket.socket().connect(("93.184.216.34", 80)),
            "create_connection": lambda: socket.create_connection(("example.com", 443), timeout=30),
            "urlopen": lambda: urllib.request.urlopen("https://example.com/w.pth", timeout=30),
        }.items():
            try:
                call()
                results[name] = "connected"
            except OSError as e:
                results[name] = str(offline.explain(e) or e)
        import torch.hub
        try:
            torch.hub.load_state_dict_from_url("https://download.pytorch.org/models/x-0123abcd.pth")
            results["hub"] = "downloaded"
        except OSError as e:
            results["hub"] = str(e)
        results["seconds"] = time.monotonic() - t0
        results["env"] = [os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")]
        print(json.dumps(results))
    """, tmp_path)
    for name in ("connect", "create_connection", "urlopen", "hub"):
        assert out[name].startswith(DOWNLOADS), (name, out[name])
    assert "download.pytorch.org/models/x-0123abcd.pth" in out["hub"]
    assert out["seconds"] < 5
    assert out["env"] == ["1", "1"]


def test_a_checkpoint_already_in_the_hub_cache_still_loads(tmp_path):
    out = _run("""
        import json, os, torch
        from nnlite_tui.core.convert.worker import offline
        offline.enforce()
        cache = os.path.join(torch.hub.get_dir(), "checkpoints")
        os.makedirs(cache)
        torch.save({"w": torch.ones(2)}, os.path.join(cache, "cached-0123abcd.pth"))
        state = torch.hub.load_state_dict_from_url("https://download.pytorch.org/models/cached-0123abcd.pth")
        print(json.dumps({"w": state["w"].tolist()}))
    """, tmp_path)
    assert out == {"w": [1.0, 1.0]}
