"""hwaac.clikit: the exception-to-status table every command's errors go through, and the subcommand table."""

from __future__ import annotations

import argparse

import pytest

from hwaac.clikit import EXIT_USAGE, Sub, add_subcommands, auto, fail, run_guarded


class Narrow(ValueError):
    pass


def _raise(exc: BaseException) -> int:
    raise exc


def test_the_first_entry_an_exception_matches_handles_it(capsys: pytest.CaptureFixture[str]) -> None:
    catches = [
        (Narrow, lambda exc, _args: fail("hwaac x", f"narrow {exc}", 3)),
        (ValueError, lambda exc, _args: fail("hwaac x", f"wide {exc}", 1)),
    ]
    args = argparse.Namespace()
    assert run_guarded(lambda _args: _raise(Narrow("a")), args, catches) == 3
    assert run_guarded(lambda _args: _raise(ValueError("b")), args, catches) == 1
    assert capsys.readouterr().err == "hwaac x: narrow a\nhwaac x: wide b\n"


def test_an_exception_no_entry_names_goes_on_up() -> None:
    catches = [((KeyError, ValueError), lambda _exc, _args: EXIT_USAGE)]
    with pytest.raises(OSError):
        run_guarded(lambda _args: _raise(OSError("disk")), argparse.Namespace(), catches)


def test_auto_asks_only_when_the_flag_was_not_given() -> None:
    def never() -> bool:
        raise AssertionError("asked although the flag was given")

    assert auto(False, never) is False
    assert auto(True, never) is True
    assert auto(None, lambda: True) is True


def test_subcommands_keep_the_table_order_and_their_functions() -> None:
    def first(_args: argparse.Namespace) -> int:
        return 4

    def second(_args: argparse.Namespace) -> int:
        return 5

    parser = argparse.ArgumentParser(prog="hwaac")
    sub = parser.add_subparsers(dest="command", required=True)
    got = add_subcommands(sub, {"zeta": Sub(first, "runs first"), "alpha": Sub(second, "runs second", "more")})
    assert list(got) == ["zeta", "alpha"]
    assert "{zeta,alpha}" in parser.format_help()
    assert got["alpha"].description == "more"
    args = parser.parse_args(["alpha"])
    assert args.func(args) == 5
