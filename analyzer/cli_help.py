"""Help pages and option errors in kubectl's plain style, for every command (cli.py, replay/commands.py).

typer's own pages show Python type names (`<bool>`, `<list[Path]>`), brace the required arguments (`{bundle}`),
cut long flags inside a box, and its errors read `Value error, 'yaml' is not one of …`. Here a page is:
usage with the arguments' metavars, the description, arguments and options with a metavar (never a type),
and the examples as written (not re-wrapped). Errors are one `error:` line and a pointer to `--help`, exit 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

EXIT_CODES = (
    ("0", "answered (validate: valid)"),
    ("1", "validate: findings; collect: the cluster cannot be read at all"),
    ("2", "usage error, or the bundle unreadable or partly invalid (what could be answered is still printed)"),
    ("3", "collect: partial bundle (some kinds could not be read)"),
    ("130", "interrupted"),
)


def exit_codes_text() -> str:
    width = max(len(code) for code, _ in EXIT_CODES)
    return "Exit status:\n" + "\n".join(f"  {code:<{width}}  {meaning}" for code, meaning in EXIT_CODES)


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if param.metavar:
        return str(param.metavar)
    return str(param.name or "VALUE").upper()


def _default(param: Any) -> str:
    value = param.default
    if value is None or value is False or value == () or value == [] or getattr(param, "is_flag", False):
        return ""
    if callable(value):
        return ""
    value = getattr(value, "value", value)  # an Enum
    return f" (default: {value})"


def _rows(params: Iterable[Any], ctx: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    arguments, options = [], []
    for p in params:
        if getattr(p, "hidden", False):
            continue
        if p.param_type_name == "argument":
            arguments.append((_metavar(p) + ("..." if p.nargs != 1 else ""), p.help or ""))
            continue
        names = sorted(p.opts, key=lambda o: (not (o.startswith("-") and not o.startswith("--")), o))
        metavar = _metavar(p)
        head = ", ".join(names) + (f" {metavar}" if metavar else "")
        if not any(n.startswith("--") for n in names[:1]) and len(names) == 1:
            head = "    " + head  # long-only options line up under the long names of the others
        options.append((head, (p.help or "") + _default(p)))
    return arguments, options


def _write_raw(formatter: Any, text: str) -> None:
    """Examples and tables exactly as written: click would re-wrap them into one paragraph."""
    formatter.write_paragraph()
    for line in text.strip("\n").splitlines():
        formatter.write(("  " + line).rstrip() + "\n")


class HelpCommand(TyperCommand):
    """A command whose help reads like kubectl's: no type names, examples kept line by line."""

    def get_short_help_str(self, limit: int = 45) -> str:
        """The command's first sentence whole in the top-level list (click cuts it at `limit` with "..."): the
        list wraps it to the terminal instead."""
        text = " ".join((self.short_help or self.help or "").split("\n\n", 1)[0].split())
        return text.split(". ", 1)[0].rstrip(".")

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"]
        for p in self.get_params(ctx):
            if p.param_type_name == "argument":
                name = _metavar(p) + ("..." if p.nargs != 1 else "")
                pieces.append(name if p.required else f"[{name}]")
        return pieces

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_options(ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = _rows(self.get_params(ctx), ctx)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options, col_max=34)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        if self.epilog:
            _write_raw(formatter, self.epilog)


class HelpGroup(TyperGroup):
    """The top level: commands, options (--version, completion) and the exit status table."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        _, options = _rows(self.get_params(ctx), ctx)
        self.format_commands(ctx, formatter)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options, col_max=34)
        if self.epilog:
            _write_raw(formatter, self.epilog)


def error_text(exc: Any, prog: str) -> str:
    """A click/typer usage error as kubectl writes one: `error: …` then where to read the help."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else prog
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    message = message.replace("Value error, ", "")
    if message[:1].isupper() and not message[1:2].isupper():
        message = message[0].lower() + message[1:]
    return f"error: {message}\nSee '{path} --help' for usage."


def choice(values: tuple[str, ...], hint: Any = None) -> Any:
    """A callback for `-o/--output`: the value must be one of `values` (error in kubectl's words, with a hint)."""
    def check(value: str | None) -> str | None:
        if value is None or value in values:
            return value
        extra = hint(value) if hint is not None else ""
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(values)}{extra}")
    return check


__all__ = ["EXIT_CODES", "HelpCommand", "HelpGroup", "choice", "error_text", "exit_codes_text"]
