"""No runtime is named outside its own package and the registry (nnlite_tui/core/runtimes/).

Code outside runtimes/ asks the registry (a runtime's `name`, `suffix`, `app`, ...) instead of spelling
a runtime's name, label or artifact suffix: adding a runtime then touches its package and one
registration line. Read from the source: every string literal of the package's code (the f-string
parts too) and its JavaScript, matched against every registered runtime's name, label and suffix.
Prose is not code: docstrings, comments, and the `help=` / `description=` texts that document a
runtime (a CLI option's, a schema field's) may name one. The few literals that must stay are listed
in ALLOWED, each with why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nnlite_tui.core import runtimes

PACKAGE = Path(__file__).resolve().parents[1] / "nnlite_tui"
REGISTRY_DIR = PACKAGE / "core" / "runtimes"
PROSE_KEYWORDS = {"help", "description"}

# (file under nnlite_tui/, a literal it may hold) -> why it stays.
ALLOWED: dict[tuple[str, str], str] = {
    ("commands/run_cmd.py", "--keep-tflite"): "the option's name before runtimes existed, kept so scripts still run",
    ("core/outcomes.py", "tflite_"): "result keys of releases before runtimes existed, read as artifact_* keys",
    ("core/run_dir.py", "tflite"): "the artifacts folder of releases before runtimes existed (compare --remeasure)",
    ("simdevice/adb_server.py", "litert_torch"): "the tests' tiny model: a script run in a subprocess to make one "
                                                 "artifact for the simulated device",
}


def name_pattern() -> re.Pattern[str]:
    """Each registered runtime's name and label (any case) and its suffix, with or without the dot, as a
    word or a word's part joined by a non-letter ("litert_torch", "tflite_path", "model.pte")."""
    words: set[str] = set()
    for name in runtimes.runtime_names():
        runtime = runtimes.get_runtime(name)
        words |= {name, runtime.label, runtime.suffix.lstrip(".")}
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])({alternatives})(?![A-Za-z])", re.IGNORECASE)


def _prose(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are documentation: docstrings, help= and description= texts, and
    the values of a "description" key."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
        texts: list[ast.expr] = []
        if isinstance(node, ast.Call):
            texts += [k.value for k in node.keywords if k.arg in PROSE_KEYWORDS]
        if isinstance(node, ast.Dict):
            texts += [v for k, v in zip(node.keys, node.values)
                      if isinstance(k, ast.Constant) and k.value in PROSE_KEYWORDS]
        for text in texts:
            ids |= {id(n) for n in ast.walk(text)}
    return ids


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal of a module's code."""
    tree = ast.parse(path.read_text(), filename=str(path))
    prose = _prose(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose]


def js_literals(path: Path) -> list[tuple[int, str]]:
    quoted = re.compile(r"'([^'\\\n]*)'|\"([^\"\\\n]*)\"|`([^`\\]*)`")
    return [(n, "".join(m.groups(""))) for n, line in enumerate(path.read_text().splitlines(), 1)
            for m in quoted.finditer(line) if not line.lstrip().startswith(("//", "/*", "*"))]


def runtime_names_outside(package: Path = PACKAGE) -> list[str]:
    pattern = name_pattern()
    found = []
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.js")]):
        if REGISTRY_DIR in path.parents:
            continue
        where = path.relative_to(package).as_posix()
        texts = literals(path) if path.suffix == ".py" else js_literals(path)
        for line, text in texts:
            if pattern.search(text) and not any(where == f and allowed in text for f, allowed in ALLOWED):
                found.append(f"{where}:{line}: {text[:80]!r}")
    return found


def test_no_runtime_is_named_outside_the_registry_and_the_runtimes_packages():
    assert runtime_names_outside() == []


def test_every_allowed_literal_is_still_there():
    """An entry whose literal has gone is taken out of the list, so the list stays the short truth."""
    for where, allowed in ALLOWED:
        assert any(allowed in text for _, text in literals(PACKAGE / where)), (where, allowed)


def test_the_check_sees_what_it_forbids(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "leak.py").write_text(
        '"""Docs may say LiteRT."""\n'
        'import click\n'
        'SUFFIX = {"executorch": ".pte"}  # ExecuTorch in a comment is fine\n'
        'opt = click.option("--x", help="as .tflite")\n'
        'PATH = f"model{x}.tflite"\n')
    (tmp_path / "page.js").write_text("const g = r.runtime !== 'litert';\n// litert in a comment\n")
    assert runtime_names_outside(tmp_path) == [
        "core/leak.py:3: 'executorch'", "core/leak.py:3: '.pte'", "core/leak.py:5: '.tflite'",
        "page.js:1: 'litert'"]


def test_the_app_protocols_runtimes_are_registered_and_say_how_the_app_runs_them():
    """APP_RUNTIMES is the app's Runtime enum, written out in the registry: each is a registered runtime
    with an app engine, so nothing else needs to know which runtime the app can run."""
    for name in runtimes.APP_RUNTIMES:
        assert name in runtimes.runtime_names() and runtimes.get_runtime(name).app is not None
