"""The console never imports the CLI layer (commands/), nor torch."""

import subprocess
import sys


def test_console_modules_do_not_import_the_cli_or_torch():
    code = ("import sys, pkgutil, importlib, nnlite_tui.tui as t\n"
            "for m in pkgutil.walk_packages(t.__path__, 'nnlite_tui.tui.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(' '.join(sorted(n for n in sys.modules if n.startswith('nnlite_tui.commands') or n == 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
