"""Readers of Java and Kotlin sources into public member signatures (api_signatures.py uses them).

tree-sitter's grammars parse the files; each public type becomes a TypeInfo whose members are one
normalised line each (see api_signatures.py for the form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter
import tree_sitter_java
import tree_sitter_kotlin

JAVA = tree_sitter.Parser(tree_sitter.Language(tree_sitter_java.language()))
KOTLIN = tree_sitter.Parser(tree_sitter.Language(tree_sitter_kotlin.language()))


@dataclass
class TypeInfo:
    name: str                      # qualified within its package: Interpreter.Options
    package: str
    supertypes: list[str] = field(default_factory=list)
    members: dict[str, str] = field(default_factory=dict)   # key (name + params) -> signature

    @property
    def fqn(self) -> str:
        return f"{self.package}.{self.name}"


def _text(node) -> str:
    return node.text.decode("utf-8")


def simple_type(text: str) -> str:
    """`java.util.Map<java.lang.Integer, Object>` -> `Map<Integer,Object>`; `GpuDelegate.Options` -> `Options`."""
    text = re.sub(r"@\w+(\([^)]*\))?\s*", "", text)
    text = re.sub(r"\s+", "", text)
    return re.sub(r"(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", text)


# --- Java ---------------------------------------------------------------------------------------

def _java_modifiers(node) -> str:
    mods = [c for c in node.children if c.type == "modifiers"]
    return _text(mods[0]) if mods else ""


def _java_params(node) -> str:
    params = node.child_by_field_name("parameters")
    types = []
    for p in params.named_children:
        if p.type in ("formal_parameter", "spread_parameter"):
            kind = next(c for c in p.named_children if c.type not in ("modifiers", "identifier", "variable_declarator"))
            types.append(simple_type(_text(kind)) + ("..." if p.type == "spread_parameter" else ""))
    return ",".join(types)


def _java_type(node, package: str, outer: str, found: list[TypeInfo]) -> None:
    name = _text(node.child_by_field_name("name"))
    qualified = f"{outer}.{name}" if outer else name
    info = TypeInfo(qualified, package)
    for field_name in ("superclass", "interfaces"):
        sup = node.child_by_field_name(field_name)
        if sup is not None:
            info.supertypes += [simple_type(_text(t)) for t in sup.named_children[0].named_children] \
                if sup.named_children and sup.named_children[0].type == "type_list" else [simple_type(_text(t)) for t in sup.named_children]
    for c in node.children:
        if c.type == "extends_interfaces":
            info.supertypes += [simple_type(_text(t)) for t in c.named_children[0].named_children]
    found.append(info)
    body = node.child_by_field_name("body")
    is_interface = node.type == "interface_declaration"
    for member in body.named_children if body is not None else []:
        if member.type == "enum_body_declarations":
            members = member.named_children
        else:
            members = [member]
        for m in members:
            _java_member(m, info, package, qualified, is_interface, found)
        if member.type == "enum_constant":
            info.members[_text(member.child_by_field_name("name"))] = f"enum {_text(member.child_by_field_name('name'))}"


def _java_member(m, info: TypeInfo, package: str, qualified: str, is_interface: bool, found: list[TypeInfo]) -> None:
    mods = _java_modifiers(m)
    public = "public" in mods or (is_interface and "private" not in mods)
    if m.type in ("class_declaration", "interface_declaration", "enum_declaration"):
        if public:
            _java_type(m, package, qualified, found)
        return
    if not public:
        return
    static = " static" if "static" in mods else ""
    if m.type == "method_declaration":
        name = _text(m.child_by_field_name("name"))
        params = _java_params(m)
        ret = simple_type(_text(m.child_by_field_name("type")))
        info.members[f"{name}({params})"] = f"fun {name}({params}): {ret}{static}"
    elif m.type == "constructor_declaration":
        params = _java_params(m)
        info.members[f"<init>({params})"] = f"constructor({params})"
    elif m.type in ("field_declaration", "constant_declaration"):
        ftype = simple_type(_text(m.child_by_field_name("type")))
        for d in m.named_children:
            if d.type == "variable_declarator":
                name = _text(d.child_by_field_name("name"))
                info.members[name] = f"field {name}: {ftype}{static}"


def java_types(path: Path) -> list[TypeInfo]:
    tree = JAVA.parse(path.read_bytes())
    if tree.root_node.has_error:
        raise ValueError(f"{path}: the Java grammar could not parse this file")
    package = ""
    found: list[TypeInfo] = []
    for node in tree.root_node.named_children:
        if node.type == "package_declaration":
            package = _text(node.named_children[0])
        elif node.type in ("class_declaration", "interface_declaration", "enum_declaration"):
            if "public" in _java_modifiers(node):
                _java_type(node, package, "", found)
    return found


# --- Kotlin -------------------------------------------------------------------------------------

def _kt_modifiers(node) -> str:
    mods = [c for c in node.children if c.type == "modifiers"]
    return _text(mods[0]) if mods else ""


def _kt_hidden(mods: str) -> bool:
    return bool(re.search(r"\b(private|internal|protected|external)\b", mods))


def _kt_type(node) -> str:
    kinds = ("user_type", "nullable_type", "function_type", "parenthesized_type")
    found = [c for c in node.named_children if c.type in kinds]
    return simple_type(_text(found[0])) if found else ""


def _kt_function(m, info: TypeInfo, static: bool) -> None:
    mods = _kt_modifiers(m)
    if _kt_hidden(mods):
        return
    name = next(_text(c) for c in m.named_children if c.type in ("simple_identifier", "identifier"))
    params = []
    for p in next(c for c in m.named_children if c.type == "function_value_parameters").named_children:
        if p.type != "parameter":
            continue
        # The grammar puts `vararg` in a sibling node just before its parameter.
        before = p.prev_named_sibling
        vararg = "vararg " if before is not None and before.type == "parameter_modifiers" and "vararg" in _text(before) else ""
        default = "=" if p.next_sibling is not None and p.next_sibling.type == "=" else ""
        params.append(vararg + _kt_type(p) + default)
    ret = ""
    after_params = False
    for c in m.children:
        if c.type == "function_value_parameters":
            after_params = True
        elif after_params and c.type in ("user_type", "nullable_type", "function_type"):
            ret = simple_type(_text(c))
            break
    if not ret:
        ret = "Unit" if any(c.type == "function_body" and _text(c).lstrip().startswith("{")
                            for c in m.named_children) else "?"
    tags = "".join(f" @{a}" for a in ("JvmStatic", "JvmOverloads") if f"@{a}" in mods)
    joined = ",".join(params)
    info.members[f"{name}({joined})"] = f"fun {name}({joined}): {ret}{tags}{' static' if static else ''}"


def _kt_property(m, info: TypeInfo, static: bool) -> None:
    mods = _kt_modifiers(m)
    if _kt_hidden(mods):
        return
    decl = next(c for c in m.named_children if c.type == "variable_declaration")
    name = _text(decl.named_children[0])
    ptype = _kt_type(decl)
    binding = "var" if any(c.type == "var" or _text(c) == "var" for c in m.children if not c.is_named) else "val"
    if "const" in mods:
        value = m.named_children[-1]
        info.members[name] = f"const {name} = {_text(value)}"
    else:
        info.members[name] = f"{binding} {name}: {ptype or '?'}{' @JvmField' if '@JvmField' in mods else ''}"


def _kt_class(node, package: str, outer: str, found: list[TypeInfo]) -> None:
    mods = _kt_modifiers(node)
    if _kt_hidden(mods):
        return
    name_node = next((c for c in node.named_children if c.type in ("type_identifier", "identifier")), None)
    if node.type == "companion_object":
        info = next(t for t in found if t.name == outer and t.package == package)
        body = next((c for c in node.named_children if c.type == "class_body"), None)
        _kt_body(body, info, package, outer, found, static=True)
        return
    name = _text(name_node)
    qualified = f"{outer}.{name}" if outer else name
    info = TypeInfo(qualified, package)
    found.append(info)
    for c in node.named_children:
        if c.type == "delegation_specifiers":
            info.supertypes += [re.sub(r"\(.*", "", simple_type(_text(s))) for s in c.named_children]
        elif c.type == "primary_constructor":
            hidden = _kt_hidden(_kt_modifiers(c))
            params = c.named_children[-1] if c.named_children else None
            types = []
            for p in params.named_children if params is not None else []:
                if p.type != "class_parameter":
                    continue
                ptype = _kt_type(p)
                types.append(ptype)
                binding = _text(p).lstrip().split(" ", 1)[0]
                if binding in ("val", "var") and not _kt_hidden(_kt_modifiers(p)):
                    pname = next(_text(x) for x in p.named_children if x.type in ("simple_identifier", "identifier"))
                    info.members[pname] = f"{binding} {pname}: {ptype}"
            if not hidden:
                info.members[f"<init>({','.join(types)})"] = f"constructor({','.join(types)})"
        elif c.type in ("class_body", "enum_class_body"):
            _kt_body(c, info, package, qualified, found, static=False)


def _kt_body(body, info: TypeInfo, package: str, qualified: str, found: list[TypeInfo], static: bool) -> None:
    for m in body.named_children if body is not None else []:
        if m.type == "function_declaration":
            _kt_function(m, info, static)
        elif m.type == "property_declaration":
            _kt_property(m, info, static)
        elif m.type == "enum_entry":
            name = _text(next(c for c in m.named_children if c.type in ("simple_identifier", "identifier")))
            info.members[name] = f"enum {name}"
        elif m.type in ("class_declaration", "object_declaration", "companion_object"):
            _kt_class(m, package, qualified, found)


def kotlin_types(path: Path) -> list[TypeInfo]:
    # The grammar cannot parse an annotated primary constructor on its own line (ExecuTorch's
    # `class EValue\n@DoNotStrip\nprivate constructor(`); annotations other than the @Jvm* ones that
    # change the Java signature are dropped from the output anyway, so they go before parsing.
    source = re.sub(r"@(?!Jvm)[A-Za-z_][\w.]*(\([^()]*\))?", "", path.read_text(encoding="utf-8"))
    # Nor a primary constructor on the line after the class name (`class Tensor_float32\ninternal constructor(`).
    source = re.sub(r"(class\s+\w+(?:<[^>]*>)?)[ \t]*\n\s*((?:\w+\s+)*constructor\s*\()", r"\1 \2", source)
    tree = KOTLIN.parse(source.encode("utf-8"))
    if tree.root_node.has_error:
        raise ValueError(f"{path}: the Kotlin grammar could not parse this file")
    package = ""
    found: list[TypeInfo] = []
    for node in tree.root_node.named_children:
        if node.type == "package_header":
            package = _text(node.named_children[0])
        elif node.type in ("class_declaration", "object_declaration"):
            _kt_class(node, package, "", found)
    return found
