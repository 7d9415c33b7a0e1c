"""Colour themes: YAML files in themes/ -> validated -> textual.theme.Theme.

Installed from the wheel they live in nnlite_tui/themes (pyproject force-includes the top-level
themes/ there); in an editable install they are in the repository's top-level themes/.
One built-in theme in code keeps the console usable if no file can be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml
from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "nnlite-dark"
COLOUR_KEYS = ("primary", "secondary", "accent", "warning", "error", "success", "foreground",
               "background", "surface", "panel", "boost")
OTHER_KEYS = {"name": str, "dark": bool, "luminosity_spread": float, "text_alpha": float}

BUILTIN = Theme(
    name=DEFAULT_THEME, dark=True, primary="#4C9BE8", secondary="#8A9CC2", accent="#E0A84E",
    warning="#E0A84E", error="#EF7078", success="#59C27C", foreground="#D8DEE9",
    background="#14181F", surface="#1B2029", panel="#252C38",
    variables={"nnlite-border": "#6B7A93", "nnlite-card-border": "#5E6C84"},
)
# Variables the console's CSS uses (console.tcss); a theme file without them gets these colours of its own.
DEFAULT_VARIABLES = {"nnlite-border": "panel-lighten-2", "nnlite-card-border": "panel-lighten-1"}


@dataclass
class LoadedThemes:
    themes: dict[str, Theme] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # one line per file that could not be used


def theme_dirs(package: Path | None = None) -> list[Path]:
    """nnlite_tui/themes (installed wheel), then the repository's themes/ (editable install)."""
    package = package or Path(__file__).resolve().parent.parent
    return [d for d in (package / "themes", package.parent / "themes") if d.is_dir()]


def parse_theme(data: object, source: str) -> Theme:
    """A Theme from one YAML document; ValueError names the file and the bad key."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of theme keys")
    unknown = set(data) - set(COLOUR_KEYS) - set(OTHER_KEYS) - {"variables"}
    if unknown:
        raise ValueError(f"{source}: unknown keys {sorted(unknown)}")
    for key in ("name", "primary"):
        if not data.get(key):
            raise ValueError(f"{source}: `{key}` is required")
    for key, kind in OTHER_KEYS.items():
        if key in data and not isinstance(data[key], kind if kind is not float else (int, float)):
            raise ValueError(f"{source}: `{key}` must be {kind.__name__}")
    theme = Theme(**data)
    try:
        colours = theme.to_color_system().generate()
    except ColorParseError as exc:
        raise ValueError(f"{source}: {exc}") from exc
    if not isinstance(theme.variables, dict):
        raise ValueError(f"{source}: `variables` must be a mapping")
    for key, fallback in DEFAULT_VARIABLES.items():
        theme.variables.setdefault(key, colours[fallback])
    return theme


def load_themes(dirs: list[Path] | None = None) -> LoadedThemes:
    """Every valid theme in `dirs` (first directory wins on a name clash) plus the built-in default."""
    loaded = LoadedThemes(themes={BUILTIN.name: BUILTIN})
    seen: set[str] = set()
    for directory in theme_dirs() if dirs is None else dirs:
        for path in sorted(directory.glob("*.y*ml")):
            try:
                theme = parse_theme(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))
            except (OSError, yaml.YAMLError, ValueError, TypeError) as exc:
                loaded.errors.append(f"theme {path.name} not loaded: {exc}")
                continue
            if theme.name not in seen:
                seen.add(theme.name)
                loaded.themes[theme.name] = theme
    return loaded


def theme_colour(variables: dict[str, str], name: str) -> str:
    """A theme variable as an opaque hex colour, for Rich renderables (DataTable cells)."""
    background = Color.parse(variables.get("background", "#000000"))
    value = (variables.get(name) or variables.get("foreground", "#ffffff")).split()
    alpha = float(value[1].rstrip("%")) / 100 if len(value) > 1 else 1.0
    # Textual writes derived colours as "<colour> <alpha>%", and text colours as "auto <alpha>%".
    colour = background.get_contrast_text(alpha) if value[0] == "auto" else Color.parse(value[0]).multiply_alpha(alpha)
    return (background + colour).hex
