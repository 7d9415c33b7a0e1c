"""Without --cluster nothing changes: the run path never imports ray."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

CODE = """
import sys
from click.testing import CliRunner
from nnlite_tui.cli import main
import nnlite_tui.commands.run_cmd, nnlite_tui.commands.devices_cmd
import nnlite_tui.core.run.setup, nnlite_tui.core.run.pipeline, nnlite_tui.core.cluster.session
result = CliRunner().invoke(main, ["run", "--help"])
assert result.exit_code == 0, result.output
assert "--cluster" in result.output
print("ray" in sys.modules)
"""


def test_run_path_does_not_import_ray():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_cluster_without_ray_says_how_to_install(tmp_path):
    # A run asked for a cluster where ray cannot be imported: a clear error, not a traceback.
    code = ("import sys; sys.modules['ray'] = None\n"
            "from nnlite_tui.cli import main\n"
            "main(['run', 'sample_models', '--include', 'mnist_lenet', '--cluster', 'local', '--out', sys.argv[1],"
            " '--headless'])")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "run")], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 5, done.stderr
    assert "pip install 'nnlite-tui[ray]'" in done.stderr
