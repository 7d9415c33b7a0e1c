"""The import contract, read from the source (every import, lazy ones inside functions too).

- core imports neither Textual nor the console (nnlite_tui.tui) nor the CLI layer (nnlite_tui.commands);
- the console does not import the CLI layer, and reads reports only through core (no globbing of the
  run directory's layout in nnlite_tui/tui);
- core has no import loops, type-only imports included;
- a runtime's internals (nnlite_tui.core.runtimes.<name>.<module>) are imported by nothing outside
  that runtime's package; the registry (nnlite_tui.core.runtimes) alone imports the package itself;
  LiteRT's own libraries are imported only under runtimes/litert, ExecuTorch's only under
  runtimes/executorch.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nnlite_tui"


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = PACKAGE.parent, type_only: bool = False) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved); with `type_only`,
    the imports under `if TYPE_CHECKING:` too."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only and not type_only:  # annotations only: never imported at run time
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


def graph(under: str, root: Path = PACKAGE.parent, type_only: bool = False) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for p in (root / under.replace(".", "/")).rglob("*.py")}
    return {name: imports_of(path, root, type_only) for name, path in modules.items()}


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


def module_deps(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ may re-export its own modules: that is not a loop between modules.
    return {m: {i for i in found if i in edges and i != m and not m.startswith(i + ".")}
            for m, found in edges.items()}


def test_core_has_no_import_loops_type_only_imports_included():
    assert find_loops(module_deps(graph("nnlite_tui.core", type_only=True))) == []


RUNTIMES = "nnlite_tui.core.runtimes"


def runtime_leaks(edges: dict[str, set[str]], runtime_names: set[str]) -> list[str]:
    """Imports of a runtime's package or its modules from outside it. The registry alone may import
    the package and take the runtime object from it (a name of the package that is not a module)."""
    leaks = []
    for module, found in edges.items():
        for name in runtime_names:
            package = f"{RUNTIMES}.{name}"
            if module == package or module.startswith(package + "."):
                continue
            for imported in found:
                if imported != package and not imported.startswith(package + "."):
                    continue
                if module == RUNTIMES and (imported == package or imported not in edges):
                    continue
                leaks.append(f"{module} imports {imported}")
    return sorted(leaks)


def test_runtime_internals_are_imported_only_inside_their_runtime():
    names = {p.name for p in (PACKAGE / "core" / "runtimes").iterdir() if (p / "__init__.py").is_file()}
    assert {"litert", "executorch"} <= names
    assert runtime_leaks(graph("nnlite_tui"), names) == []


def test_litert_libraries_are_imported_only_by_the_litert_runtime():
    libraries = ("ai_edge_litert", "litert_torch", "ai_edge_quantizer")
    outside = {m: found for m, found in graph("nnlite_tui").items() if not m.startswith(f"{RUNTIMES}.litert")}
    assert violations_in(outside, libraries) == []


def test_executorch_libraries_are_imported_only_by_the_executorch_runtime():
    outside = {m: found for m, found in graph("nnlite_tui").items() if not m.startswith(f"{RUNTIMES}.executorch")}
    assert violations_in(outside, ("executorch",)) == []
    inside = {m: found for m, found in graph("nnlite_tui").items() if m.startswith(f"{RUNTIMES}.executorch")}
    assert violations_in(inside, ("executorch",))  # the check sees what it forbids


def violations_in(edges: dict[str, set[str]], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{m} imports {i}" for m, found in edges.items() for i in found
                  if any(i == f or i.startswith(f + ".") for f in forbidden))


def test_the_console_reads_reports_only_through_core():
    """No module of the console lists the run directory itself: it asks core.run_dir (exact names)."""
    assert violations("nnlite_tui.tui", ("glob", "fnmatch")) == []
    for path in (PACKAGE / "tui").rglob("*.py"):
        tree = ast.parse(path.read_text())
        layout = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and n.value.strip("/") in ("reports", "tflite", "artifacts", "state.json")]
        assert layout == [], f"{path} names the run directory's layout: {layout}"


def test_the_checks_see_what_they_forbid(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from nnlite_tui.commands.options import source_options\n")
    assert "nnlite_tui.commands.options" in imports_of(bad, root=tmp_path)
    assert find_loops({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a -> b -> c -> a"]


def test_a_deliberate_loop_and_a_leak_are_caught(tmp_path):
    """The checks above, on a copy of core with a type-only loop and a runtime leak added."""
    import shutil

    core = tmp_path / "nnlite_tui" / "core"
    shutil.copytree(PACKAGE / "core", core)
    (core / "spec.py").write_text((core / "spec.py").read_text() + (
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from nnlite_tui.core.run.pipeline import Pipeline\n"))
    (core / "events.py").write_text((core / "events.py").read_text() + (
        "\ndef _leak():\n    from nnlite_tui.core.runtimes.litert.graph import read_graph\n    return read_graph\n"))
    loops = find_loops(module_deps(graph("nnlite_tui.core", root=tmp_path, type_only=True)))
    assert any("nnlite_tui.core.spec" in loop and "nnlite_tui.core.run.pipeline" in loop for loop in loops)
    assert find_loops(module_deps(graph("nnlite_tui.core", root=tmp_path))) == []  # it is type-only
    leaks = runtime_leaks(graph("nnlite_tui.core", root=tmp_path), {"litert"})
    assert leaks == ["nnlite_tui.core.events imports nnlite_tui.core.runtimes.litert.graph",
                     "nnlite_tui.core.events imports nnlite_tui.core.runtimes.litert.graph.read_graph"]


# The stages of core in the order a unit passes through them, the foundations first: a package may
# import the ones before it, never one after it. The runtime registry (runtimes/__init__, base,
# default: names, the protocol, lookup by name) sits low, because every stage asks for a runtime by
# name; the runtimes themselves (runtimes/<name>/) sit above the machinery they plug into (convert,
# bench, ops). `python -m pytest tests/test_import_contract.py -k order` checks it: a new arrow against
# it fails with the modules that make it.
STAGE_ORDER = (
    "versions", "choices", "names", "safe_paths", "text_safety", "json_file", "run_dir", "events", "logs",
    "progress", "runtimes", "spec", "outcomes", "disk", "store", "results", "sources", "convert", "bench", "ops",
    "runtimes/*", "devices", "report", "run", "cluster",
)
# Arrows that run back up today, each with why it is still there (fix it and its line goes).
KNOWN_BACK_ARROWS: dict[tuple[str, str], str] = {
    ("bench", "devices"): "bench/step.py drives a Device and catches DeviceError, both in devices/base.py, whose "
                          "protocol takes BenchSettings from bench/; moving the protocol below bench touches every "
                          "device and the runner",
}


def stage_of(module: str, runtime_packages: set[str]) -> str | None:
    """The stage of a module of core: its package (or top-level module) under nnlite_tui.core, with the
    runtimes' own packages (runtime_packages: nnlite_tui.core.runtimes.<name>) apart from the registry."""
    parts = module.split(".")
    if parts[:2] != ["nnlite_tui", "core"] or len(parts) < 3:
        return None
    if parts[2] == "runtimes" and ".".join(parts[:4]) in runtime_packages:
        return "runtimes/*"
    return parts[2]


def back_arrows(edges: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Every import from a stage to a later one, by (importer's stage, imported stage)."""
    rank = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    runtime_packages = {".".join(m.split(".")[:4]) for m in edges
                        if m.startswith(f"{RUNTIMES}.") and m.count(".") >= 4}
    found: dict[tuple[str, str], list[str]] = {}
    for module, imported in edges.items():
        here = stage_of(module, runtime_packages)
        for name in imported:
            there = stage_of(name, runtime_packages)
            if here is None or there is None or here == there:
                continue
            if rank[there] > rank[here]:
                found.setdefault((here, there), []).append(f"{module} imports {name}")
    return {pair: sorted(lines) for pair, lines in found.items()}


def test_every_stage_of_core_is_placed_in_the_order():
    edges = graph("nnlite_tui.core")
    stages = {stage_of(m, set()) for m in edges} - {None, "__init__"}
    assert stages - set(STAGE_ORDER) == set(), "place each new package of core in STAGE_ORDER"


def test_core_imports_run_in_stage_order_but_for_the_known_exceptions():
    found = back_arrows(graph("nnlite_tui.core"))
    new = {pair: lines for pair, lines in found.items() if pair not in KNOWN_BACK_ARROWS}
    assert new == {}, "imports against the stage order (move the shared piece down, or list it with why)"
    assert set(KNOWN_BACK_ARROWS) <= set(found), "a known back-arrow is gone: remove its line"


def test_a_deliberate_back_arrow_is_caught(tmp_path):
    """On a copy of core, a unit (spec.py, a foundation) that imports the runner fails the order check."""
    import shutil

    core = tmp_path / "nnlite_tui" / "core"
    shutil.copytree(PACKAGE / "core", core)
    (core / "spec.py").write_text((core / "spec.py").read_text() + (
        "\ndef _back():\n    from nnlite_tui.core.run.pipeline import Pipeline\n    return Pipeline\n"))
    found = back_arrows(graph("nnlite_tui.core", root=tmp_path))
    assert found[("spec", "run")] == ["nnlite_tui.core.spec imports nnlite_tui.core.run.pipeline",
                                      "nnlite_tui.core.spec imports nnlite_tui.core.run.pipeline.Pipeline"]
    assert set(found) - set(KNOWN_BACK_ARROWS) == {("spec", "run")}
