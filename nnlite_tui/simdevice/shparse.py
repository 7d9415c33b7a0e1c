"""A small POSIX sh parser: lists (`;`, `&&`, `||`, newline), pipelines, quoting, `$?`/`$VAR`,
globs and redirections (`>`, `>>`, `<`, `2>`, `2>&1`, `>&2`).

Not simulated (an honest error, exit 2): command substitution, `if`/`for`/`while`/`case`, subshells.

Words keep their pieces so that expansion happens at run time (`$?` changes between commands):
a word is a list of (kind, text) with kind "lit" (quoted, no glob), "bare" (unquoted, globbed)
or "var" (a variable name).
"""

from __future__ import annotations

from dataclasses import dataclass, field

Word = list[tuple[str, str]]
OPERATORS = ("&&", "||", ">>", ";", "|", "&", ">", "<", "\n")


class ShellSyntaxError(Exception):
    pass


@dataclass
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: Word


@dataclass
class Command:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[Command]


def _read_var(text: str, i: int) -> tuple[str, int]:
    """text[i] is just after `$`; return (name, next index)."""
    if i < len(text) and text[i] == "{":
        end = text.find("}", i)
        if end < 0:
            raise ShellSyntaxError("bad substitution")
        return text[i + 1:end], end + 1
    if i < len(text) and (text[i] in "?#$!" or text[i].isdigit()):
        return text[i], i + 1
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return text[i:j], j


def _refuse_substitution(text: str, i: int) -> None:
    if text[i] == "`" or text.startswith("$(", i):
        raise ShellSyntaxError("command substitution is not supported by the simulated shell")


def tokenize(text: str) -> list[object]:
    """Return a list of Words and operator strings."""
    tokens: list[object] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        op = next((o for o in OPERATORS if text.startswith(o, i)), None)
        if op:
            tokens.append(op)
            i += len(op)
            continue
        word: Word = []
        while i < n and text[i] not in " \t\r\n;&|<>":
            c = text[i]
            _refuse_substitution(text, i)
            if c == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated quoted string")
                word.append(("lit", text[i + 1:end]))
                i = end + 1
            elif c == '"':
                i += 1
                buf = ""
                while True:
                    if i >= n:
                        raise ShellSyntaxError("unterminated quoted string")
                    c = text[i]
                    if c == '"':
                        i += 1
                        break
                    _refuse_substitution(text, i)
                    if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                        buf += text[i + 1]
                        i += 2
                    elif c == "$" and i + 1 < n and (text[i + 1].isalnum() or text[i + 1] in "_{?#$!"):
                        word.append(("lit", buf))
                        buf = ""
                        name, i = _read_var(text, i + 1)
                        word.append(("var", name))
                    else:
                        buf += c
                        i += 1
                word.append(("lit", buf))
            elif c == "\\":
                if i + 1 < n:
                    word.append(("lit", text[i + 1]))
                i += 2
            elif c == "$" and i + 1 < n and (text[i + 1].isalnum() or text[i + 1] in "_{?#$!"):
                name, i = _read_var(text, i + 1)
                word.append(("var", name))
            else:
                word.append(("bare", c))
                i += 1
        # "2>" style fd redirect: a bare all-digit word glued to > or <
        if i < n and text[i] in "<>" and word and all(k == "bare" for k, _ in word) \
                and "".join(t for _, t in word).isdigit():
            tokens.append(("fd", int("".join(t for _, t in word))))
            continue
        tokens.append(word)
    return tokens


def parse(text: str) -> list[tuple[str, Pipeline]]:
    """Parse a command line into [(connector, pipeline)], connector in {";", "&&", "||"}
    for the pipeline's relation to the previous one (";" for the first)."""
    tokens = tokenize(text)
    result: list[tuple[str, Pipeline]] = []
    connector = ";"
    commands: list[Command] = []
    current = Command()
    i = 0

    def finish_command() -> None:
        nonlocal current
        if not current.words and not current.redirects:
            raise ShellSyntaxError("syntax error: unexpected operator")
        commands.append(current)
        current = Command()

    while i < len(tokens):
        tok = tokens[i]
        fd = None
        if isinstance(tok, tuple) and tok[0] == "fd":
            fd = tok[1]
            i += 1
            tok = tokens[i]
        if tok in (">", ">>", "<"):
            op = str(tok)
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            dup = False
            if target == "&":  # >&2 or 2>&1
                dup = True
                target = tokens[i + 2] if i + 2 < len(tokens) else None
                i += 1
            if not isinstance(target, list):
                raise ShellSyntaxError("syntax error: missing redirection target")
            default_fd = 0 if op == "<" else 1
            current.redirects.append(Redirect(fd if fd is not None else default_fd,
                                              ">&" if dup else op, target))
            i += 2
            continue
        if isinstance(tok, list):
            current.words.append(tok)
        elif tok == "|":
            finish_command()
        elif tok in (";", "&&", "||", "&", "\n"):
            if current.words or current.redirects:
                finish_command()
            if commands:
                result.append((connector, Pipeline(commands)))
                commands = []
            elif tok in ("&&", "||"):
                raise ShellSyntaxError(f"syntax error: unexpected '{tok}'")
            connector = ";" if tok in (";", "&", "\n") else str(tok)
        i += 1
    if current.words or current.redirects:
        finish_command()
    if commands:
        result.append((connector, Pipeline(commands)))
    elif connector in ("&&", "||"):
        raise ShellSyntaxError("syntax error: unexpected end of file")
    return result
