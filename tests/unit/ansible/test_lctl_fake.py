"""The lctl and systemctl fakes (tests/fakes/bin) against the recorded lctl output (tests/fixtures/tools/lctl/) and
hwaac's parsers: what a test or a molecule scenario reads from the fakes is what the real tools print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import parse_list_nids
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_params import parse_get_param, parse_version
from hwaac.health.parsers.lustre_imports import parse_imports
from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import REPO

LCTL = REPO / "tests" / "fixtures" / "tools" / "lctl"
INST = "ffff8a2c4e1b8000"
LNET_TCP = {
    "configured": True,
    "version": "2.15.5",
    "nets": [{"net": "tcp", "nis": [{"interface": "eth0", "nid": "10.20.0.5@tcp", "status": "up"}]}],
}


class Node(FakeHost):
    """A Lustre client as the lctl, mount and systemctl fakes see it."""

    def lnet(self, data: dict | None) -> None:
        if data is not None:
            self.write_state("lnet.json", data)

    def knobs(self, **knobs: object) -> None:
        self.merge_knobs("lustre.json", knobs)

    def mount(self, source: str = "10.20.0.1@tcp:/lfs1") -> Path:
        mp = self.tmp / "mnt"
        mp.mkdir(exist_ok=True)
        res = self.sh("mount", "-t", "lustre", source, str(mp))
        assert res.returncode == 0, res.stderr
        return mp


@pytest.fixture
def node(tmp_path: Path) -> Node:
    n = Node(tmp_path)
    n.lnet(LNET_TCP)
    return n


def test_get_param_lines_have_the_recorded_shape(node: Node) -> None:
    node.mount()
    out = node.sh("lctl", "get_param", "osc.*.max_rpcs_in_flight", "mdc.*.max_mod_rpcs_in_flight").stdout
    shape = re.compile(r"^(osc|mdc|llite|ldlm\.namespaces)\.lfs1-(OST|MDT)[0-9a-f]{4}-(osc|mdc)-[0-9a-f]{16}\.\w+=\d+$")
    for line in (LCTL / "get_param_aws_tips.txt").read_text().splitlines()[:9]:
        assert shape.match(line), line  # the pattern fits the recording ...
    lines = out.splitlines()
    assert len(lines) == 5 and all(shape.match(line) for line in lines)  # ... and the fake
    values = parse_get_param(out)
    assert values[f"osc.lfs1-OST0003-osc-{INST}.max_rpcs_in_flight"] == "8"
    assert values[f"mdc.lfs1-MDT0000-mdc-{INST}.max_mod_rpcs_in_flight"] == "7"
    assert node.sh("lctl", "get_param", "-n", "osc.lfs1-OST0000*.max_dirty_mb").stdout == "2000\n"
    assert node.sh("lctl", "get_param", "osc.*").stdout == ""  # directories only: nothing printed


def test_set_param_prints_one_line_per_device_and_sticks(node: Node) -> None:
    node.mount()
    res = node.sh("lctl", "set_param", "osc.lfs1-OST*.max_rpcs_in_flight=32", "ldlm.namespaces.*.lru_max_age=600000")
    assert res.returncode == 0, res.stderr
    printed = parse_get_param(res.stdout)
    assert len(printed) == 4 + 5 and set(printed.values()) == {"32", "600000"}
    assert set(parse_get_param(node.sh("lctl", "get_param", "osc.*.max_rpcs_in_flight").stdout).values()) == {"32"}
    assert node.sh("lctl", "set_param", "-n", "osc.*.checksums=0").stdout == ""


def test_get_param_no_match_is_the_derived_error(node: Node) -> None:
    node.mount()
    res = node.sh("lctl", "get_param", "osc.lfs9-OST*.max_rpcs_in_flight")
    assert res.returncode != 0 and res.stdout == ""
    assert res.stderr == (LCTL / "get_param_no_match_derived.stderr").read_text()


def test_mdc_rpc_limits_as_the_2_15_kernel(node: Node) -> None:
    node.mount()
    mdc = f"mdc.lfs1-MDT0000-mdc-{INST}"
    refused = node.sh("lctl", "set_param", f"{mdc}.max_mod_rpcs_in_flight=50")
    assert refused.returncode == 34
    assert refused.stderr == (
        f"error: set_param: setting /sys/fs/lustre/mdc/lfs1-MDT0000-mdc-{INST}/"
        "max_mod_rpcs_in_flight=50: Numerical result out of range\n"
    )
    assert node.sh("lctl", "set_param", f"{mdc}.max_rpcs_in_flight=4").returncode == 0
    assert node.sh("lctl", "get_param", "-n", f"{mdc}.max_mod_rpcs_in_flight").stdout == "3\n"  # lowered with it
    node.knobs(version="2.16.1")
    assert node.sh("lctl", "set_param", f"{mdc}.max_mod_rpcs_in_flight=50").returncode == 0
    assert node.sh("lctl", "get_param", "-n", f"{mdc}.max_rpcs_in_flight").stdout == "51\n"  # 2.16+ raises it


def test_read_only_permanent_and_client_file_settings(node: Node) -> None:
    node.mount()
    ro = node.sh("lctl", "set_param", "version=2")
    assert ro.returncode == 13 and "Permission denied" in ro.stderr
    perm = node.sh("lctl", "set_param", "-P", "osc.*.max_rpcs_in_flight=32")
    assert perm.returncode != 0 and perm.stderr == "error: executing set_param: No such device\n"
    old = node.sh("lctl", "set_param", "-C", "osc.*.max_rpcs_in_flight=32")
    assert old.returncode != 0 and old.stderr == "set_param: invalid option -- 'C'\n"
    node.knobs(version="2.17.0")
    new = node.sh("lctl", "set_param", "-Clfs1", "osc.lfs1-*.max_rpcs_in_flight=32")
    assert new.returncode == 0
    assert (node.state / "etc" / "lustre" / "mount.lfs1.params").read_text() == "osc.lfs1-*.max_rpcs_in_flight=32\n"


def test_version_health_and_import(node: Node) -> None:
    node.mount()
    assert parse_version(node.sh("lctl", "get_param", "-n", "version").stdout)[0] == (2, 15, 5)
    assert node.sh("lctl", "get_param", "version").stdout == "version=2.15.5\n"
    assert node.sh("lctl", "get_param", "-n", "health_check").stdout == "healthy\n"
    node.knobs(health_check="NOT HEALTHY", import_state={"lfs1-OST0002": "DISCONN"}, deactivated=["lfs1-OST0003"])
    assert node.sh("lctl", "get_param", "-n", "health_check").stdout == "NOT HEALTHY\n"
    # read with the health check's parser (hwaac.health.parsers.lustre_imports), the code that reads imports for real
    read = parse_imports(node.sh("lctl", "get_param", "osc.*.import").stdout, exit_code=0)
    assert read.unknown == []
    imports = {i.target: i for i in read.imports}
    assert len(imports) == 4 and imports["lfs1-OST0000_UUID"].state == "FULL"
    assert imports["lfs1-OST0000_UUID"].failover_nids == ["10.20.0.1@tcp"]
    assert imports["lfs1-OST0000_UUID"].current_connection == "10.20.0.1@tcp"
    assert imports["lfs1-OST0002_UUID"].state == "DISCONN"
    out = node.sh("lctl", "get_param", "osc.*.ost_server_uuid").stdout
    lines = out.splitlines()
    assert lines[0] == f"osc.lfs1-OST0000-osc-{INST}.ost_server_uuid=lfs1-OST0000_UUID\tFULL"
    # name + value reach 80 columns: read_param prints NAME= and the value on the next line
    assert lines[-2:] == [f"osc.lfs1-OST0003-osc-{INST}.ost_server_uuid=", "lfs1-OST0003_UUID\tFULL\tDEACTIVATED"]
    uuids = parse_get_param(out)
    assert uuids[f"osc.lfs1-OST0002-osc-{INST}.ost_server_uuid"] == "lfs1-OST0002_UUID\tDISCONN"
    assert uuids[f"osc.lfs1-OST0003-osc-{INST}.ost_server_uuid"] == "lfs1-OST0003_UUID\tFULL\tDEACTIVATED"
    # the import block has the recorded key layout (the 2.12.7 recording stops after service_estimates)
    recorded = [ln.split(":")[0] for ln in (LCTL / "osc_import_2.12.7.txt").read_text().splitlines()]
    block = node.sh("lctl", "get_param", "-n", f"osc.lfs1-OST0000-osc-{INST}.import").stdout.splitlines()
    assert [ln.split(":")[0] for ln in block][: len(recorded)] == recorded


def test_list_nids_up_down_and_unloaded(tmp_path: Path) -> None:
    node = Node(tmp_path)
    unloaded = node.sh("lctl", "list_nids")
    assert unloaded.returncode != 0 and unloaded.stderr.startswith("opening /dev/lnet failed: No such device\n")
    node.lnet({**LNET_TCP, "configured": False, "nets": []})
    down = node.sh("lctl", "list_nids")
    assert down.returncode != 0 and down.stderr == (LCTL / "list_nids_network_down.txt").read_text()
    node.lnet(LNET_TCP)
    up = node.sh("lctl", "list_nids")
    assert up.stdout == (LCTL / "list_nids_tcp.txt").read_text()
    assert [str(n) for n in parse_list_nids(up.stdout)] == ["10.20.0.5@tcp"]


def test_ping_as_recorded(node: Node) -> None:
    node.knobs(peers={"10.20.0.1@tcp": ["10.20.0.1@tcp", "10.20.1.1@tcp"]}, unreachable_nids=["10.20.0.99@tcp"])
    ok = node.sh("lctl", "ping", "10.20.0.1@tcp")
    assert ok.returncode == 0 and ok.stdout == (LCTL / "ping_two_nids.txt").read_text()
    bad = node.sh("lctl", "ping", "10.20.0.99@tcp")
    assert bad.returncode != 0 and bad.stdout == "" and bad.stderr == (LCTL / "ping_failed.txt").read_text()
    node.knobs(version="2.16.1")
    assert node.sh("lctl", "ping", "10.20.0.99@tcp").stdout == (LCTL / "ping_failed.txt").read_text()
    assert "No route to host" in node.sh("lctl", "ping", "10.20.0.1@o2ib").stdout


def test_systemctl_fake_enable_is_enabled_start(node: Node) -> None:
    units = node.state / "etc" / "systemd" / "system"
    units.mkdir(parents=True)
    (units / "demo.service").write_text(
        "[Service]\nType=oneshot\nExecStart=/bin/true\n\n[Install]\nWantedBy=mnt-lfs1.mount\n"
    )
    assert node.sh("systemctl", "is-enabled", "demo.service").stdout == "disabled\n"
    en = node.sh("systemctl", "enable", "demo")
    assert en.returncode == 0
    assert en.stderr == (f"Created symlink {units}/mnt-lfs1.mount.wants/demo.service \u2192 {units}/demo.service.\n")
    assert node.sh("systemctl", "enable", "demo").stderr == ""  # already enabled: nothing
    assert node.sh("systemctl", "is-enabled", "demo.service").stdout == "enabled\n"
    missing = node.sh("systemctl", "is-enabled", "nope.service")
    assert missing.returncode == 1
    assert missing.stderr == "Failed to get unit file state for nope.service: No such file or directory\n"
    gone = node.sh("systemctl", "start", "nope")
    assert gone.returncode == 5 and gone.stderr == "Failed to start nope.service: Unit nope.service not found.\n"
    node.sh("systemctl", "daemon-reload")
    (units / "demo.service").write_text((units / "demo.service").read_text() + "# changed\n")
    assert "changed on disk. Run 'systemctl daemon-reload'" in node.sh("systemctl", "start", "demo").stderr
    assert node.sh("systemctl", "is-active", "demo").stdout == "active\n"


def test_systemctl_fake_show_for_ansible_systemd_module(node: Node) -> None:
    units = node.state / "etc" / "systemd" / "system"
    units.mkdir(parents=True)
    (units / "demo.service").write_text("[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
    shown = dict(line.split("=", 1) for line in node.sh("systemctl", "show", "demo.service").stdout.splitlines())
    assert shown["LoadState"] == "loaded" and shown["UnitFileState"] == "disabled"
    assert shown["ActiveState"] == "inactive"
    missing = node.sh("systemctl", "show", "nope.service")
    assert missing.returncode == 0 and "LoadState=not-found" in missing.stdout
    assert node.sh("systemctl").returncode == 0
