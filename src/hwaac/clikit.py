"""What every ``hwaac`` command shares: the exit statuses common to all (each command's own, 3 and up, stay in its
module), a one-line error on stderr, exceptions mapped to exit statuses, and the argparse pieces that repeat
(a subcommand with its function, a command group, the options several commands take).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2  # 1 also: an invalid intent, a FAIL; 2: usage, nothing done
FABRIC_HELP = "fabric.yml or the folder holding it"

Run = Callable[[argparse.Namespace], int]
Handler = Callable[[Any, argparse.Namespace], int]
Catches = Sequence[tuple[type[BaseException] | tuple[type[BaseException], ...], Handler]]


def fail(prefix: str, why: object, code: int = EXIT_USAGE) -> int:
    """Say ``PREFIX: WHY`` on stderr; the exit status ``code``."""
    print(f"{prefix}: {why}", file=sys.stderr)
    return code


def silence_stdout() -> None:
    """After a BrokenPipeError (output piped into e.g. ``head``): send what is left of stdout to /dev/null, so that
    Python does not complain while it flushes it at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def run_guarded(func: Run, args: argparse.Namespace, catches: Catches) -> int:
    """``func(args)``; an exception of a type ``catches`` names goes to the handler of the first entry it matches
    (as ``except`` clauses in that order), which says why and returns the exit status. Others go on up."""
    types = tuple(t for kinds, _handler in catches for t in (kinds if isinstance(kinds, tuple) else (kinds,)))
    try:
        return func(args)
    except types as exc:
        handler = next(handler for kinds, handler in catches if isinstance(exc, kinds))
        return handler(exc, args)


def guarded(func: Run, catches: Catches) -> Run:
    """``func`` run through :func:`run_guarded` with ``catches``."""

    def run(args: argparse.Namespace) -> int:
        return run_guarded(func, args, catches)

    return run


def add_command(sub: argparse._SubParsersAction, name: str, func: Run, **kwargs: Any) -> argparse.ArgumentParser:
    """The subcommand ``name`` (``kwargs``: help, description, ... of ``add_parser``), which runs ``func(args)``."""
    p = sub.add_parser(name, **kwargs)
    p.set_defaults(func=func)
    return p


class Sub(NamedTuple):
    """A subcommand: the function it runs, its line in its group's help, and the description of its own help."""

    func: Run
    help: str
    description: str | None = None


def add_subcommands(sub: argparse._SubParsersAction, table: Mapping[str, Sub]) -> dict[str, argparse.ArgumentParser]:
    """Each subcommand of ``table``, in its order (the order the group's help lists them in): name -> its parser, to
    add its own options to."""
    return {name: add_command(sub, name, s.func, help=s.help, description=s.description) for name, s in table.items()}


def add_group(
    sub: argparse._SubParsersAction, name: str, dest: str, **kwargs: Any
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The command ``name`` that takes a subcommand (one is required; its name in ``args.<dest>``): its parser and
    the action to add the subcommands to."""
    p = sub.add_parser(name, **kwargs)
    return p, p.add_subparsers(dest=dest, required=True)


def add_fabric(p: argparse.ArgumentParser, text: str = FABRIC_HELP, metavar: str | None = "INTENT_DIR") -> None:
    """The positional ``fabric``: an intent file or its folder."""
    p.add_argument("fabric", metavar=metavar, help=text)


def add_output(p: argparse.ArgumentParser, text: str, metavar: str | None = "FILE", required: bool = False) -> None:
    """``-o/--output``: where the command writes."""
    p.add_argument("-o", "--output", metavar=metavar, required=required, help=text)


def add_auto_flag(p: argparse.ArgumentParser, flag: str, text: str) -> None:
    """``--FLAG`` / ``--no-FLAG``; given neither, :func:`auto` decides when the command runs."""
    p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)


def auto(value: bool | None, otherwise: Callable[[], bool]) -> bool:
    """An :func:`add_auto_flag` flag's value: as given, else what ``otherwise()`` says (a terminal, a variable)."""
    return otherwise() if value is None else value


def add_allow_flags(p: argparse.ArgumentParser, renumber: str, remove: str) -> None:
    """``--allow-renumber`` and ``--allow-remove``: accept a change that renumbers, or removes, what is in service."""
    p.add_argument("--allow-renumber", action="store_true", help=renumber)
    p.add_argument("--allow-remove", action="store_true", help=remove)


__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "FABRIC_HELP",
    "Sub",
    "add_allow_flags",
    "add_auto_flag",
    "add_command",
    "add_fabric",
    "add_group",
    "add_output",
    "add_subcommands",
    "auto",
    "fail",
    "guarded",
    "run_guarded",
    "silence_stdout",
]
