"""Themes: YAML files shipped in the wheel and in the repository, validated, with a fallback."""

import re
import tomllib
from pathlib import Path

from nnlite_tui.tui.messages import PipelineEvents
from nnlite_tui.tui.themes import DEFAULT_THEME, load_themes, theme_colour, theme_dirs

from .conftest import FROZEN, frozen_app
from .scripted import busy_run_events

REPO = Path(__file__).resolve().parents[2]
STYLES = REPO / "nnlite_tui" / "tui" / "styles"


def test_three_shipped_themes_load_from_the_repository():
    loaded = load_themes([REPO / "themes"])
    assert loaded.errors == []
    assert {"nnlite-dark", "nnlite-light", "nnlite-high-contrast"} <= set(loaded.themes)
    assert loaded.themes["nnlite-dark"].dark and not loaded.themes["nnlite-light"].dark


def test_theme_dirs_find_the_wheel_layout_and_the_repository_layout(tmp_path):
    wheel_pkg = tmp_path / "site-packages" / "nnlite_tui"
    (wheel_pkg / "themes").mkdir(parents=True)
    assert theme_dirs(wheel_pkg) == [wheel_pkg / "themes"]
    repo_pkg = tmp_path / "repo" / "nnlite_tui"
    repo_pkg.mkdir(parents=True)
    (tmp_path / "repo" / "themes").mkdir()
    assert theme_dirs(repo_pkg) == [tmp_path / "repo" / "themes"]
    assert REPO / "themes" in theme_dirs()


def test_the_wheel_ships_themes():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["themes"] == "nnlite_tui/themes"


def test_a_bad_theme_file_is_reported_and_skipped(tmp_path):
    (tmp_path / "a.yaml").write_text("name: broken\nprimary: '#zzzzzz'\n")
    (tmp_path / "b.yaml").write_text("name: extra\nprimary: '#123456'\ncolour: red\n")
    (tmp_path / "c.yaml").write_text("primary: [unclosed\n")
    (tmp_path / "d.yaml").write_text("name: fine\nprimary: '#336699'\ndark: false\n")
    loaded = load_themes([tmp_path])
    assert set(loaded.themes) == {DEFAULT_THEME, "fine"}
    assert len(loaded.errors) == 3
    assert any("a.yaml" in e and "#zzzzzz" in e for e in loaded.errors)
    assert any("b.yaml" in e and "colour" in e for e in loaded.errors)


def test_styles_use_theme_variables_never_literal_colours():
    literal = re.compile(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\b(red|green|blue|white|black|yellow)\b")
    for path in STYLES.glob("*.tcss"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("/*")[0]
            assert not literal.search(code), f"{path.name}:{number}: {line.strip()}"


def test_theme_colour_resolves_derived_and_auto_text_colours():
    variables = {"background": "#000000", "success": "#00ff00", "text-muted": "auto 50%", "half": "#ffffff 50%"}
    assert theme_colour(variables, "success") == "#00FF00"
    assert theme_colour(variables, "half") == "#7F7F7F"
    assert theme_colour(variables, "text-muted").startswith("#")


def test_widgets_take_colours_from_the_theme_only():
    literal = re.compile(r"[\"'\[ ]#[0-9a-fA-F]{6}\b|\b(red|green|blue|yellow|magenta|cyan)\b(?=[\"'\] ])")
    for path in (REPO / "nnlite_tui" / "tui").rglob("*.py"):
        if path.name == "themes.py":  # the built-in fallback theme is the one place colours are defined
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not literal.search(line), f"{path.relative_to(REPO)}:{number}: {line.strip()}"


async def test_a_theme_switched_during_a_run_draws_as_a_console_started_in_it():
    """The panes keep drawn lines for reuse; a theme change must draw them all again."""
    screens = []
    for start, switch in (("nnlite-dark", "nnlite-light"), ("nnlite-light", None)):
        app = frozen_app(theme=start)
        async with app.run_test(size=(160, 48)) as pilot:
            app.post_message(PipelineEvents(busy_run_events(FROZEN)))
            await pilot.pause()
            await pilot.pause()
            if switch:
                app.theme = switch
                await pilot.pause()
                await pilot.pause()
            screens.append([list(strip) for strip in app.screen._compositor.render_strips()])
    switched, started = screens
    assert len(switched) == len(started)
    for y, (a, b) in enumerate(zip(switched, started)):
        assert a == b, f"line {y} differs"
