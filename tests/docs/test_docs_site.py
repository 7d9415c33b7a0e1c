"""The documentation site builds in strict mode, and its command reference covers the CLI.

The build (a few seconds) runs once per module, in-process, into a temporary directory: a broken
link, a missing anchor, a nav entry without its page or a failing generator fails it, with the
warnings in the message. The reference check walks the click group itself, so a command or option
added to the code must show up on the generated page (and carry help text, or the page says nothing).
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import click
import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from nnlite_tui.cli import main as nnlite_cli

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "android-app" / "protocol" / "report.schema.json"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    collect = _Collect()
    logging.getLogger("mkdocs").addHandler(collect)
    try:
        build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True))
    except Abort as exc:
        pytest.fail(f"mkdocs build --strict: {exc}\n" + "\n".join(collect.messages))
    finally:
        logging.getLogger("mkdocs").removeHandler(collect)
    return out


def command_paths(group: click.Command, prefix: str = "nnlite") -> list[tuple[str, click.Command]]:
    """Every command under the group, depth first, as (`nnlite cache info`, command)."""
    found = [(prefix, group)]
    if isinstance(group, click.Group):
        ctx = click.Context(group, info_name=prefix)
        for name in group.list_commands(ctx):
            found.extend(command_paths(group.get_command(ctx, name), f"{prefix} {name}"))
    return found


def _sections(page: str) -> dict[str, str]:
    """The generated page cut at its headings: heading text -> the text up to the next heading."""
    parts = re.split(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, flags=re.S)
    sections = {}
    for title, body in zip(parts[1::2], parts[2::2]):
        text = html.unescape(re.sub(r"<[^>]+>", "", title)).replace("¶", "").strip()
        sections[text] = html.unescape(re.sub(r"<[^>]+>", " ", body))
    return sections


def missing_from_reference(group: click.Command, page: str) -> list[str]:
    """What the CLI has that the reference page lacks: commands, options, help texts."""
    sections = _sections(page)
    problems = []
    for path, command in command_paths(group):
        if command.hidden:
            continue
        if path not in sections:
            problems.append(f"{path}: no section")
            continue
        if not (command.help or command.short_help):
            problems.append(f"{path}: no help text")
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            names = param.opts + param.secondary_opts
            if not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", sections[path]) for n in names):
                problems.append(f"{path}: option {'/'.join(names)} missing")
            elif not param.help and not isinstance(param.type, click.Choice):
                # A choice lists what it takes on the page; anything else says nothing without help.
                problems.append(f"{path}: option {'/'.join(names)} has no help text")
    return problems


def test_the_site_builds_strict_with_every_section(site):
    for page in ("index.html", "tutorial/first-run.html", "guide/compare.html", "reference/cli.html",
                 "reference/report-fields.html", "reference/app-protocol.html", "guide/android-app.html",
                 "explanation/measurement.html", "explanation/figures.html"):
        assert (site / page).is_file(), page


def test_every_command_and_option_is_in_the_reference(site):
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert missing_from_reference(nnlite_cli, page) == []
    assert len(command_paths(nnlite_cli)) >= 13  # the group, its 12 commands and their subcommands


def test_the_check_sees_a_command_added_without_docs(site):
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")

    @click.command()
    @click.option("--frobnicate", type=int)
    def newcmd(frobnicate):
        pass

    @click.command(help="Documented, with an option that is not on the page.")
    @click.option("--colour", help="Which colour.")
    def status(colour):
        pass

    grown = click.Group("nnlite", commands={"newcmd": newcmd, "status": status}, help="x")
    problems = missing_from_reference(grown, page)
    assert "nnlite newcmd: no section" in problems
    assert "nnlite status: option --colour missing" in problems


def test_report_fields_page_lists_every_field_of_the_schema(site):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    text = html.unescape((site / "reference" / "report-fields.html").read_text(encoding="utf-8"))
    for name in schema["properties"]:
        assert f"<code>{name}</code>" in text, name
    for block, node in schema["$defs"].items():
        assert f'id="{block}"' in text, block
        for name in node.get("properties", {}):
            assert f"<code>{name}</code>" in text, f"{block}.{name}"
