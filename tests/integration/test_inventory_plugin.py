"""The inventory plugin aiinfra.hwaac.fabric run by ansible-inventory, as users run it: from a plan file written by
``hwaac plan``, and from a real NetBox that the sync wrote (fresh database), with a person's edits in NetBox
(primary IP, status, a corrected ASN) showing in the host variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"
BIN = Path(sys.executable).parent


def inventory(path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``ansible-inventory -i path ...`` from the repository root (its ansible.cfg finds the collection in place)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NETBOX_", "ANSIBLE_"))}
    return subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", str(path), *args],
        cwd=REPO,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def plain(doc: object) -> object:
    """The listing without ansible-inventory's marks on strings an inventory plugin gave (never templated):
    ``{"__ansible_unsafe": "x"}`` -> ``"x"``."""
    if isinstance(doc, dict):
        if set(doc) == {"__ansible_unsafe"}:
            return doc["__ansible_unsafe"]
        return {k: plain(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [plain(v) for v in doc]
    return doc


def listing(path: Path, env: dict[str, str] | None = None) -> dict:
    r = inventory(path, "--list", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return plain(json.loads(r.stdout))  # type: ignore[return-value]


def test_from_a_plan_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run([str(BIN / "hwaac"), "plan", str(INTENT), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    src = tmp_path / "lab.hwaac.yml"
    src.write_text(
        "plugin: aiinfra.hwaac.fabric\nplan_file: out\nrender_dir: out\n"
        "keyed_groups:\n  - {key: hwaac_model | default('none'), prefix: model}\n"
    )
    inv = listing(src)
    plan = build_plan(load_intent(INTENT))
    leaves = sorted(s.name for s in plan.switches if s.role == "leaf")
    assert sorted(inv["leaf"]["hosts"]) == leaves
    assert sorted(inv["gpu_nodes"]["hosts"]) == sorted(n.name for n in plan.nodes)
    assert inv["fabric_nbsync"]["children"] == ["switches", "gpu_nodes"]
    assert sorted(inv["switches"]["children"]) == ["leaf", "spine"]
    assert sorted(inv["model_Lab_32x400G"]["hosts"]) == sorted(s.name for s in plan.switches)  # constructed
    sw = plan.switches[0]
    hv = inv["_meta"]["hostvars"][sw.name]
    assert hv["hwaac_asn"] == sw.asn and hv["hwaac_source"] == "plan"
    # the files the roles push are where hwaac plan wrote them
    assert (Path(hv["hwaac_files"]) / "config_db.json").is_file()


def test_bad_sources_are_clear_errors(tmp_path: Path) -> None:
    src = tmp_path / "x.hwaac.yml"
    src.write_text("plugin: aiinfra.hwaac.fabric\nplan_file: nowhere\n")
    r = inventory(src, "--list")
    assert "plan_file" in r.stderr and "nowhere" in r.stderr
    src.write_text("plugin: aiinfra.hwaac.fabric\nsource: netbox\n")
    r = inventory(src, "--list")
    assert "source=netbox needs intent" in r.stderr


@pytest.mark.cost(40)
def test_from_netbox_with_a_persons_edits(synced_nb: Instance, tmp_path: Path) -> None:
    netbox_db = synced_nb  # INTENT's fabric, synced
    plan = build_plan(load_intent(INTENT))
    api = pynetbox.api(netbox_db.url, token=netbox_db.token)
    leaf = next(s for s in plan.switches if s.role == "leaf")
    # a person records the management address, marks the switch active and corrects its ASN
    dev = api.dcim.devices.get(name=leaf.name)
    mgmt = api.dcim.interfaces.create(device=dev.id, name="eth0", type="1000base-t", mgmt_only=True)
    ip = api.ipam.ip_addresses.create(
        address="192.0.2.10/24", assigned_object_type="dcim.interface", assigned_object_id=mgmt.id
    )
    dev.update({"primary_ip4": ip.id, "status": "active", "custom_fields": {"hwaac_asn": 64999}})
    src = tmp_path / "nb.hwaac.yml"
    src.write_text(f"plugin: aiinfra.hwaac.fabric\nsource: netbox\nintent: {INTENT}\n")
    env = {"NETBOX_URL": netbox_db.url, "NETBOX_TOKEN": netbox_db.token}
    r = inventory(src, "--list", env=env)
    assert r.returncode == 0, r.stderr
    inv: dict = plain(json.loads(r.stdout))  # type: ignore[assignment]
    hv = inv["_meta"]["hostvars"][leaf.name]
    assert hv["ansible_host"] == "192.0.2.10" and hv["hwaac_status"] == "active" and hv["hwaac_asn"] == 64999
    assert f"{leaf.name}: asn {leaf.asn} -> 64999 (NetBox)" in r.stderr  # told, not silent
    assert netbox_db.token not in r.stdout + r.stderr
    other = next(s for s in plan.switches if s.role == "spine")
    assert "ansible_host" not in inv["_meta"]["hostvars"][other.name]
    assert inv["_meta"]["hostvars"][other.name]["hwaac_asn"] == other.asn
    assert sorted(inv["gpu_nodes"]["hosts"]) == sorted(n.name for n in plan.nodes)
    # a wrong token is one clear error, without the token
    r = inventory(src, "--list", env={**env, "NETBOX_TOKEN": "nbt_wrong.secretsecret"})
    assert "rejected the API token" in r.stderr and "secretsecret" not in r.stderr


def test_cached_inventory_is_served_without_reading_the_source(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run([str(BIN / "hwaac"), "plan", str(INTENT), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    src = tmp_path / "cached.hwaac.yml"
    src.write_text(
        f"plugin: aiinfra.hwaac.fabric\nplan_file: out\ncache: true\n"
        f"cache_plugin: ansible.builtin.jsonfile\ncache_connection: {tmp_path / 'cache'}\n"
        "cache_timeout: 3600\n"
    )
    first = listing(src)
    assert list((tmp_path / "cache").iterdir()), "the first run fills the cache"
    (out / "plan.json").unlink()  # the source is gone: only the cache can answer
    assert listing(src) == first
    # --flush-cache reads the source again, which now fails clearly
    r = inventory(src, "--list", "--flush-cache")
    assert "plan.json" in r.stderr and "No such file" in r.stderr
