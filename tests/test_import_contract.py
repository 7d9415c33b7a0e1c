"""The import contract, read from the source (every import, lazy ones inside functions too).

- core imports neither Textual nor the console (nnlite_tui.tui) nor the CLI layer (nnlite_tui.commands);
- the console does not import the CLI layer;
- core has no import loops.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nnlite_tui"


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = PACKAGE.parent) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved)."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:  # annotations only: never imported at run time
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def graph(under: str) -> dict[str, set[str]]:
    modules = {module_name(p): p for p in (PACKAGE.parent / under.replace(".", "/")).rglob("*.py")}
    return {name: imports_of(path) for name, path in modules.items()}


def violations(under: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{m} imports {i}" for m, found in graph(under).items() for i in found
                  if any(i == f or i.startswith(f + ".") for f in forbidden))


def test_core_imports_neither_textual_nor_the_console_nor_the_cli():
    assert violations("nnlite_tui.core", ("textual", "rich", "nnlite_tui.tui", "nnlite_tui.commands",
                                          "nnlite_tui.cli")) == []


def test_the_console_does_not_import_the_cli_layer():
    assert violations("nnlite_tui.tui", ("nnlite_tui.commands", "nnlite_tui.cli")) == []


def find_loops(deps: dict[str, set[str]]) -> list[str]:
    loops = []
    state: dict[str, int] = {}  # 1 on the current path, 2 finished

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(deps[module]):
            if state.get(dep) == 1:
                loops.append(" -> ".join(path[path.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep, path + [dep])
        state[module] = 2

    for module in sorted(deps):
        if module not in state:
            visit(module, [module])
    return loops


def test_core_has_no_import_loops():
    edges = graph("nnlite_tui.core")
    # A package's __init__ may re-export its own modules: that is not a loop between modules.
    deps = {m: {i for i in found if i in edges and i != m and not m.startswith(i + ".")}
            for m, found in edges.items()}
    assert find_loops(deps) == []


def test_the_checks_see_what_they_forbid(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from nnlite_tui.commands.options import source_options\n")
    assert "nnlite_tui.commands.options" in imports_of(bad, root=tmp_path)
    assert find_loops({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a -> b -> c -> a"]
