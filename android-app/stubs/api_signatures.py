"""Public signatures of Java and Kotlin classes, in one normalised line per member.

It reads the stubs in stubs/src and the real libraries' published sources the same way
(signature_readers.py), so the two can be compared: tests/android/test_stub_signatures.py checks that every member a stub declares is in
stubs/api-signatures.txt, the list this script made from LiteRT's and ExecuTorch's sources.

    python android-app/stubs/api_signatures.py --pins litert=1.4.2,executorch=1.5.1 \\
        --source "litert: ..." --source "executorch: ..." ROOT... > android-app/stubs/api-signatures.txt

Only the classes the stubs declare are listed (the app's API surface), with every public member,
inherited ones included (LiteRT's Interpreter gets `run` from InterpreterImpl). Types lose their
package and outer-class qualifiers (`java.io.File` -> `File`, `Interpreter.Options` -> `Options`);
parameter names, bodies, annotations other than Kotlin's @JvmStatic/@JvmOverloads and default values
are dropped, since none of them changes how the app's code compiles against the class.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from signature_readers import TypeInfo, java_types, kotlin_types

STUBS = Path(__file__).resolve().parent / "src"
# The stubs of the Android platform are checked against its documentation, not here (no source).
LIBRARY_PACKAGES = ("org.tensorflow.lite", "org.pytorch.executorch")



def read_types(roots: list[Path]) -> dict[str, TypeInfo]:
    types: dict[str, TypeInfo] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".java", ".kt"):
                continue
            try:
                found = java_types(path) if path.suffix == ".java" else kotlin_types(path)
            except ValueError as exc:
                # A file the grammar cannot read is skipped; if it held a class the stubs need,
                # main() fails naming that class.
                print(f"api_signatures: skipped {exc}", file=sys.stderr)
                continue
            for info in found:
                types.setdefault(info.fqn, info)
    return types


def _resolve(types: dict[str, TypeInfo], info: TypeInfo, name: str) -> TypeInfo | None:
    name = re.sub(r"<.*", "", name)
    outer = info.name.rsplit(".", 1)[0] if "." in info.name else ""
    for candidate in (f"{info.package}.{outer}.{name}" if outer else None, f"{info.package}.{name}"):
        if candidate and candidate in types:
            return types[candidate]
    matches = [t for t in types.values() if t.name == name or t.name.endswith("." + name)]
    return matches[0] if len(matches) == 1 else None


def flattened(types: dict[str, TypeInfo], info: TypeInfo, seen: frozenset = frozenset()) -> dict[str, str]:
    """The type's public members with those it inherits from supertypes in the same sources."""
    members: dict[str, str] = {}
    for sup in info.supertypes:
        parent = _resolve(types, info, sup)
        if parent is not None and parent.fqn not in seen and parent.fqn != info.fqn:
            inherited = flattened(types, parent, seen | {info.fqn})
            # Constructors, statics and companion constants belong to the class that declares them.
            members.update({k: v for k, v in inherited.items()
                            if not k.startswith("<init>") and not v.endswith(" static") and not v.startswith("const ")})
    members.update(info.members)
    return members


def signatures(types: dict[str, TypeInfo], wanted: set[str] | None = None) -> list[str]:
    lines = []
    for fqn in sorted(types):
        if not fqn.startswith(LIBRARY_PACKAGES) or (wanted is not None and fqn not in wanted):
            continue
        lines += [f"{fqn} {sig}" for sig in sorted(flattened(types, types[fqn]).values())]
    return lines


def stub_signatures(stubs: Path = STUBS) -> list[str]:
    return signatures(read_types([stubs]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="source folders of the real libraries")
    parser.add_argument("--pins", required=True, help="the versions the list is for, e.g. litert=1.4.2,executorch=1.5.1")
    parser.add_argument("--source", action="append", default=[], help="a line saying where the sources came from")
    args = parser.parse_args(argv)
    wanted = {line.split(" ", 1)[0] for line in stub_signatures()}
    real = signatures(read_types(args.roots), wanted)
    missing = sorted(wanted - {line.split(" ", 1)[0] for line in real})
    if missing:
        print(f"api_signatures: not found in the sources given: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"# pins: {args.pins}")
    for line in args.source:
        print(f"# source: {line}")
    roots = " ".join(str(r) for r in args.roots)
    print(f"# made by: python android-app/stubs/api_signatures.py --pins {args.pins} --source ... {roots}"
          " (stubs/README.md: how the source folders were made)")
    print("\n".join(real))
    return 0


if __name__ == "__main__":
    sys.exit(main())
