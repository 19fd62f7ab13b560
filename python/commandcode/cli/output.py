"""Console output for the CLI: data to stdout, messages to stderr, one error line (+ hint).

Colour follows rich's rules (off when not a terminal or when `NO_COLOR` is set).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from ..errors import CommandcodeError
from ..jsonfmt import escape_lone_surrogates

stdout = Console(soft_wrap=True, highlight=False)
stderr = Console(stderr=True, soft_wrap=True, highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


def print_json(value: Any) -> None:
    """Writes `value` as pretty JSON to stdout (plain text, no markup)."""
    sys.stdout.write(escape_lone_surrogates(json.dumps(value, indent=2, ensure_ascii=False, default=str)) + "\n")
    sys.stdout.flush()


def print_json_line(value: Any) -> None:
    """Writes `value` as one compact JSON line to stdout."""
    sys.stdout.write(escape_lone_surrogates(json.dumps(value, ensure_ascii=False, default=str)) + "\n")
    sys.stdout.flush()


def fail(message: str, hint: str | None = None) -> typer.Exit:
    """Prints `error: message` (and `hint: …`) to stderr; returns the Exit to raise."""
    stderr.print(f"[bold red]error[/]: {message}", markup=True, highlight=False)
    if hint:
        stderr.print(f"[bold cyan]hint[/]: {hint}", markup=True, highlight=False)
    return typer.Exit(code=1)


def warn(message: str) -> None:
    """Prints `warning: message` to stderr."""
    stderr.print(f"[bold yellow]warning[/]: {message}", markup=True, highlight=False)


def handle_errors(function: F) -> F:
    """Turns `CommandcodeError` (and I/O errors on user files) into one stderr line and exit 1."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except CommandcodeError as error:
            raise fail(_escape(str(error)), _escape(error.hint) if error.hint else None) from None
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            raise fail(_escape(f"{where}{error.strerror or error}")) from None

    return wrapper  # type: ignore[return-value]


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
