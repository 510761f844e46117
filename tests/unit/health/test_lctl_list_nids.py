"""lctl list_nids: facts from recorded outputs (fixtures/tools/lctl, sources in its README), the host module's
reader on the same outputs, and the optional list_nids probe of the client evaluation (hwaac.health.lustre_lnet)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import LustreError, parse_list_nids
from hwaac.health.lustre import client_verdict, commands, evaluate, expected_filesystems
from hwaac.health.parsers.lctl_list_nids import parse_lctl_list_nids
from hwaac.health.result import Action, Status
from tests.unit.health.test_lustre_health import CLIENT_JSON_FS, MOUNTS, healthy_outputs, out

LCTL = Path(__file__).parents[2] / "fixtures" / "tools" / "lctl"


def read(name: str) -> str:
    return (LCTL / name).read_text()


FACTS = [  # file, NIDs, networks
    ("list_nids_tcp.txt", ["10.20.0.5@tcp"], ["tcp"]),
    ("list_nids_tcp_tcp2.txt", ["10.20.0.209@tcp", "10.20.2.209@tcp2"], ["tcp", "tcp2"]),
    ("list_nids_o2ib.txt", ["10.20.0.161@o2ib"], ["o2ib"]),  # recorded on an InfiniBand client
    (
        "list_nids_o2ib_multirail_derived.txt",
        ["10.20.0.209@o2ib", "10.20.1.209@o2ib", "10.20.2.209@o2ib1"],
        ["o2ib", "o2ib1"],
    ),
]


@pytest.mark.parametrize(("name", "nids", "nets"), FACTS)
def test_facts_and_the_host_reader_agree(name: str, nids: list[str], nets: list[str]) -> None:
    r = parse_lctl_list_nids(read(name))
    assert (r.nids, r.nets, r.unknown, r.lnet_down, r.findings) == (nids, nets, [], False, [])
    assert [str(n) for n in parse_list_nids(read(name))] == nids


def test_network_down_is_a_fact_and_the_host_refuses() -> None:
    r = parse_lctl_list_nids(read("list_nids_network_down.txt"), exit_code=1)
    assert (r.lnet_down, r.nids, r.unknown) == (True, [], [])
    with pytest.raises(LustreError, match="LNet is down"):
        parse_list_nids(read("list_nids_network_down.txt"))


@pytest.mark.parametrize("raw", ["", "10.20.0.209@o2ib\n10.20.1.2", "opening /dev/lnet failed: No such device\n"])
def test_unreadable_is_unknown(raw: str) -> None:
    assert parse_lctl_list_nids(raw).unknown


@pytest.mark.parametrize(
    ("listed", "want"),
    [
        (out(read("list_nids_o2ib_multirail_derived.txt")), (Status.PASS, [])),
        (out(read("list_nids_o2ib.txt")), (Status.PASS, [])),  # one NID, on the MGS's network o2ib: enough
        (out(read("list_nids_tcp_tcp2.txt")), (Status.FAIL, ["LUSTRE_LNET_NO_MGS_NET"])),
        (out(read("list_nids_network_down.txt"), rc=1), (Status.FAIL, ["LUSTRE_LNET_DOWN"])),
        (out("10.20.0.209@o2ib\n10.20.1.2"), (Status.UNKNOWN, ["PARSE_UNREADABLE"])),
        (out(""), (Status.UNKNOWN, ["PARSE_UNREADABLE"])),
    ],
)
def test_evaluation_judges_the_nids(listed: dict, want: tuple) -> None:
    outputs = {**healthy_outputs(), "list_nids": listed}
    v = client_verdict("gpu-node-01", evaluate(outputs, expected_filesystems(CLIENT_JSON_FS), proc_mounts=MOUNTS))
    assert (v.status, v.codes) == want
    assert all(f.action in (Action.NONE, Action.RETEST) for f in v.findings)


def test_a_failover_mgs_node_off_the_local_networks_warns() -> None:
    fs = expected_filesystems([{**CLIENT_JSON_FS[0], "mgs": [["10.20.0.1@o2ib"], ["10.30.0.3@tcp5"]]}])
    outputs = {
        **healthy_outputs(),
        "list_nids": out(read("list_nids_o2ib_multirail_derived.txt")),
        "ping 10.30.0.3@tcp5": out("12345-0@lo\n12345-10.30.0.3@tcp5\n"),
    }
    found = [f for f in evaluate(outputs, fs, proc_mounts=MOUNTS) if f.code.startswith("LUSTRE_LNET")]
    assert [(f.code, f.status) for f in found] == [("LUSTRE_LNET_MGS_NODE_OFF_NET", Status.WARN)]


def test_commands_list_nids_only_when_asked() -> None:
    assert commands(["10.20.0.1@o2ib"], nids=True)["list_nids"] == ["lctl", "list_nids"]
    assert "list_nids" not in commands(["10.20.0.1@o2ib"])
