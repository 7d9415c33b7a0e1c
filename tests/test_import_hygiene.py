"""The core and the CLI's start-up never import Textual; `nnlite --help` imports neither torch nor Textual."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import nnlite_tui.core

REPO = Path(__file__).resolve().parents[1]


def imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(nnlite_tui.core.__path__, "nnlite_tui.core."))


def test_core_modules_exist():
    assert "nnlite_tui.core.events" in core_modules() and "nnlite_tui.core.run.control" in core_modules()


def test_package_cli_and_every_core_module_never_import_textual():
    modules = ["nnlite_tui", "nnlite_tui.cli", *core_modules()]
    loaded = imported_after("\n".join(f"import {m}" for m in modules))
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}
    assert "nnlite_tui.tui" not in loaded


def test_nnlite_help_imports_neither_torch_nor_textual():
    loaded = imported_after("import sys\nfrom nnlite_tui.cli import main\n"
                            "sys.argv = ['nnlite', '--help']\n"
                            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert "click" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("torch", "textual", "litert_torch", "tensorflow", "executorch")}


def test_nnlite_help_runs():
    out = subprocess.run([sys.executable, "-m", "nnlite_tui", "--help"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0 and "tui" in out.stdout


def test_the_console_reads_a_run_without_importing_the_store_until_it_must():
    # event_log.snapshot_events imports the store (tinydb) only when there is a state file to read.
    loaded = imported_after("import nnlite_tui.tui.app\nimport nnlite_tui.core.run.event_log\nimport nnlite_tui.commands.tui_cmd")
    assert "tinydb" not in loaded and "nnlite_tui.core.store" not in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("torch", "litert_torch")}
