"""MkDocs hooks: pages generated at build time from files that live beside the code.

- reference/app-protocol.md: android-app/PROTOCOL.md (the contract stays beside the app that implements it)
- guide/android-app.md: android-app/README.md (building the APK, kept beside the Gradle build)
- reference/report-fields.md: every field of android-app/protocol/report.schema.json, the schema the
  app's and the simulator's tests validate reports against, so the reference cannot drift from it.

A link in a copied page that points outside the site becomes the repository path in code style: the
site is built from a checkout, and a path the reader can open beats a link that strict mode rejects.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "android-app" / "protocol" / "report.schema.json"

# site page -> (repository file, its folder in the repository)
COPIED = {
    "reference/app-protocol.md": "android-app/PROTOCOL.md",
    "guide/android-app.md": "android-app/README.md",
}
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _rewrite_links(text: str, source: str, page: str) -> str:
    """Links between copied files become site links; links to other repository files become paths."""
    site_of = {repo: site for site, repo in COPIED.items()}
    source_dir = posixpath.dirname(source)

    def replace(match: re.Match[str]) -> str:
        label, target, anchor = match.group(1), match.group(2), match.group(3) or ""
        if re.match(r"^[a-z]+:", target):
            return match.group(0)
        repo_path = posixpath.normpath(posixpath.join(source_dir, target))
        if repo_path in site_of:
            rel = posixpath.relpath(site_of[repo_path], posixpath.dirname(page))
            return f"[{label}]({rel}{anchor})"
        if label.startswith("`"):
            return f"{label} (`{repo_path}`)" if label.strip("`") != target else f"`{repo_path}`"
        return f"{label} (`{repo_path}`)"

    return LINK.sub(replace, text)


def _type_of(node: dict) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name})"  # toc keeps the underscore
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    kind = node.get("type")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and isinstance(node.get("items"), dict):
        return f"array of {_type_of(node['items'])}"
    if kind is None and "oneOf" in node:
        return " or ".join(_type_of(n) for n in node["oneOf"])
    if kind is None and "anyOf" in node:
        return " or ".join(_type_of(n) for n in node["anyOf"])
    return f"{kind}" if kind else "any"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rows(node: dict, prefix: str) -> list[str]:
    rows = []
    required = set(node.get("required", []))
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}{name}"
        extra = []
        for key in ("minimum", "exclusiveMinimum", "maximum", "pattern"):
            if key in child:
                extra.append(f"{key} `{child[key]}`")
        description = child.get("description", "")
        if extra:
            description = (description + " (" + ", ".join(extra) + ")").strip()
        rows.append(f"| `{path}` | {_cell(_type_of(child))} | {'yes' if name in required else ''} | {_cell(description)} |")
        if child.get("type") == "object" or "properties" in child:
            rows.extend(_rows(child, f"{path}."))
        items = child.get("items")
        if isinstance(items, dict) and "properties" in items:
            rows.extend(_rows(items, f"{path}[]."))
    return rows


def _table(node: dict, prefix: str = "") -> str:
    head = "| field | type | required | meaning |\n|---|---|---|---|\n"
    rows = _rows(node, prefix)
    return head + "\n".join(rows) + "\n" if rows else "(no fields of its own)\n"


def schema_page(schema: dict) -> str:
    parts = [
        "# Report fields\n",
        "Generated at build time from `android-app/protocol/report.schema.json`, the JSON Schema that the "
        "benchmark app's, the device simulator's and the host's reports are validated against in the test "
        "suite: every field below is checked there, so this page and the reports cannot disagree. "
        "[The app protocol](app-protocol.md) says how the fields are measured; "
        "[the report file](report.md) how nnlite wraps them in a unit's report.\n",
        f"**{schema.get('title', '')}.** {schema.get('description', '')}\n",
        "## Top-level fields\n",
        _table(schema),
        "Conditional rules (`if`/`then`, `allOf`) are in the schema file; the main ones: a report with "
        "`valid: true` carries its statistics and samples, an invalid one its `error_stage` and message, "
        "and protocol 1 reports lack every key that protocols 2 and 3 added.\n",
        "## Shared blocks\n",
    ]
    for name, node in schema.get("$defs", {}).items():
        parts.append(f"### {name}\n")
        if node.get("description"):
            parts.append(node["description"] + "\n")
        parts.append(_table(node))
    return "\n".join(parts)


def on_files(files: Files, config) -> Files:
    for page, source in COPIED.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        files.append(File.generated(config, page, content=_rewrite_links(text, source, page)))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    files.append(File.generated(config, "reference/report-fields.md", content=schema_page(schema)))
    return files


def on_page_content(html: str, page, config, files) -> str:
    # click 8.2 marks "no default" with a sentinel that mkdocs-click prints as is.
    if page.file.src_uri == "reference/cli.md":
        return html.replace("<code>Sentinel.UNSET</code>", "").replace("Sentinel.UNSET", "")
    return html
