"""The parallel collector: batched shells keep each command's streams and status apart; a timeout or a runner
error becomes an ``error`` output, never an exception. Runs real shells (the runner is subprocess here)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from hwaac.verify.lab import BATCH_FROM, LabCollector, batch_script, split_batch, vty_daemon
from hwaac.verify.raw import Command


class Local:
    """A runner that runs argv here (the lab's runs it in the device's namespace)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def run(self, device: str, argv: Sequence[str], *, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        if device == "gone":
            raise RuntimeError("namespace hwl-x-gone does not exist")
        self.calls.append((device, tuple(argv)))
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)


CMDS = [
    Command(("printf", "one\ntwo\n")),
    Command(("printf", "no newline")),
    Command(("sh", "-c", "echo oops >&2; exit 3")),
    Command(("printf", "")),
    Command(("sh", "-c", "printf 'a\\n\\n'")),
]
BATCH = CMDS + [Command(("echo", str(i))) for i in range(3)]


def test_batch_keeps_streams_and_status_apart() -> None:
    runner = Local()
    out = LabCollector(runner).collect({"h1": BATCH})
    assert len(runner.calls) == 1 and runner.calls[0][1][:2] == ("sh", "-c")  # one shell for the batch
    got = {k: (r.rc, r.stdout, r.stderr, r.error) for k, r in out["h1"].items() if k in {c.key for c in CMDS}}
    assert out["h1"]["echo 0"].stdout == "0\n"
    assert got == {
        CMDS[0].key: (0, "one\ntwo\n", "", None),
        CMDS[1].key: (0, "no newline", "", None),
        CMDS[2].key: (3, "", "oops\n", None),
        CMDS[3].key: (0, "", "", None),
        CMDS[4].key: (0, "a\n\n", "", None),
    }


def test_a_single_command_runs_on_its_own() -> None:
    runner = Local()
    out = LabCollector(runner).collect({"s1": [CMDS[2]], "s2": [CMDS[0]]})
    assert sorted(c[1] for c in runner.calls) == sorted([CMDS[2].argv, CMDS[0].argv])
    assert (out["s1"][CMDS[2].key].rc, out["s2"][CMDS[0].key].stdout) == (3, "one\ntwo\n")


class Vty(Local):
    """A runner that also answers vtysh commands from a daemon's socket (as hwaac.lab.Lab does); s2's bgpd is down."""

    def __init__(self) -> None:
        super().__init__()
        self.vty_calls: list[tuple[str, str, str]] = []

    def vty(self, device: str, daemon: str, command: str, *, timeout: float = 30.0) -> str:
        self.vty_calls.append((device, daemon, command))
        if device == "s2" and daemon == "bgpd":
            raise RuntimeError("bgpd.vty: connection refused")
        return f"{daemon} answers {command}\n"


BGP = Command(("vtysh", "-c", "show bgp summary json"))
ROUTES = Command(("vtysh", "-c", "show ip route json"))
OTHER = Command(("vtysh", "-c", "show running-config"))


def test_vtysh_commands_are_read_from_the_daemon_socket_and_fall_back_to_vtysh() -> None:
    runner = Vty()
    out = LabCollector(runner).collect({"s1": [BGP, ROUTES, CMDS[0]], "s2": [BGP]})
    assert sorted(runner.vty_calls) == [
        ("s1", "bgpd", "show bgp summary json"),
        ("s1", "zebra", "show ip route json"),
        ("s2", "bgpd", "show bgp summary json"),
    ]
    assert (out["s1"][BGP.key].rc, out["s1"][BGP.key].stdout) == (0, "bgpd answers show bgp summary json\n")
    assert out["s1"][ROUTES.key].stdout == "zebra answers show ip route json\n"
    assert out["s1"][CMDS[0].key].stdout == "one\ntwo\n"
    # the daemon did not answer: vtysh itself ran (here: whatever this machine's vtysh says, or that it is missing)
    assert ("s2", BGP.argv) in runner.calls
    assert out["s2"][BGP.key] != out["s1"][BGP.key]
    assert vty_daemon(OTHER) is None and vty_daemon(Command(("vtysh", "-c", "show ip route json", "-c", "x"))) is None


def test_batch_runs_in_parallel(tmp_path: Path) -> None:
    # each command waits (up to 30 s) until all of them have started: they can only all succeed side by side
    wait = (
        f'touch {tmp_path}/"$0"; i=0; while [ "$(ls {tmp_path} | wc -l)" -lt {BATCH_FROM} ]; do '
        'i=$((i+1)); [ $i -gt 300 ] && exit 1; sleep 0.1; done'
    )
    out = LabCollector(Local()).collect({"h1": [Command(("sh", "-c", wait, str(i))) for i in range(BATCH_FROM)]})
    assert [r.rc for r in out["h1"].values()] == [0] * BATCH_FROM


def test_timeout_and_runner_error_become_error_outputs() -> None:
    out = LabCollector(Local(), timeout=0.5).collect(
        {"h1": [Command(("sleep", "5"))], "gone": [Command(("true",))] * BATCH_FROM}
    )
    (slow,) = out["h1"].values()
    assert slow.rc is None and slow.error == "timed out after 0.5 s"
    assert [r.error for r in out["gone"].values()] == ["RuntimeError: namespace hwl-x-gone does not exist"]


def test_split_batch_marks_missing_sections() -> None:
    out = split_batch(CMDS[:2], "@@m", "@@m 0 o\nx\n@@m 0 e\n\n@@m 0 r 0\n", 1, "sh: killed\n")
    assert (out[CMDS[0].key].rc, out[CMDS[0].key].stdout) == (0, "x")
    assert out[CMDS[1].key].error == "no result from the batch shell: sh: killed"


def test_batch_script_quotes_arguments() -> None:
    script = batch_script([Command(("ping", "-I", "10.0.0.1", "$(reboot)"))], "@@m")
    assert "'$(reboot)'" in script
