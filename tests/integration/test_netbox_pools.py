"""Pools from NetBox: an intent naming a prefix role is planned from the prefix NetBox holds (real NetBox)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.errors import IntentError
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.pools import prefix_lookup
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration
INTENT = Path(__file__).parents[1] / "fixtures" / "intents" / "netbox" / "pools-from-netbox.yml"


@pytest.fixture(scope="module")
def seeded(netbox_db: Instance) -> pynetbox.api:
    api = pynetbox.api(netbox_db.url, token=netbox_db.token)
    site = api.dcim.sites.create(name="nb-lab", slug="nb-lab")
    other = api.dcim.sites.create(name="other-lab", slug="other-lab")
    p2p = api.ipam.roles.create(name="fabric-p2p", slug="fabric-p2p")
    hosts = api.ipam.roles.create(name="gpu-host-links", slug="gpu-host-links")
    api.ipam.roles.create(name="unused-role", slug="unused-role")
    scope = {"scope_type": "dcim.site"}
    api.ipam.prefixes.create(prefix="10.77.0.0/24", role=p2p.id, status="container", scope_id=site.id, **scope)
    api.ipam.prefixes.create(prefix="172.20.0.0/24", role=hosts.id, status="container", scope_id=site.id, **scope)
    # the same role at another site must not be picked
    api.ipam.prefixes.create(prefix="172.21.0.0/24", role=hosts.id, status="container", scope_id=other.id, **scope)
    return api


def test_pools_are_resolved_from_netbox_and_planned(seeded: pynetbox.api, netbox_db: Instance):
    intent = load_intent(INTENT, pool_lookup=prefix_lookup(netbox_db.url, netbox_db.token))
    assert intent.addressing.leaf_spine == "10.77.0.0/24"
    assert intent.addressing.host_links.prefix == "172.20.0.0/24"
    plan = build_plan(intent)
    hosts = [link for link in plan.links if link.kind == "host"]
    assert hosts and all((link.a_ip >> 8) == (0xAC140000 >> 8) for link in hosts)  # all inside 172.20.0.0/24


def _with_role(tmp_path: Path, role: str, site: str | None = None) -> Path:
    text = INTENT.read_text().replace(
        "{netbox_role: gpu-host-links, site: nb-lab}", f"{{netbox_role: {role}" + (f", site: {site}}}" if site else "}")
    )
    path = tmp_path / "fabric.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("role", "site", "message"),
    [
        ("no-such-role", None, "NetBox has no prefix role 'no-such-role'"),
        ("unused-role", None, "NetBox holds no prefix with role 'unused-role' at site 'nb-lab' in the global table"),
        ("gpu-host-links", "third-lab", "NetBox has no site 'third-lab' for the prefix role 'gpu-host-links'"),
    ],
)
def test_a_missing_netbox_pool_names_the_role_and_the_line(seeded, netbox_db, tmp_path, role, site, message):
    path = _with_role(tmp_path, role, site)
    with pytest.raises(IntentError) as info:
        load_intent(path, pool_lookup=prefix_lookup(netbox_db.url, netbox_db.token))
    (issue,) = [i for i in info.value.issues if i.rule == "netbox-pool-missing"]
    assert issue.path == "addressing.host_links.prefix" and message in issue.message
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "prefix: {netbox_role:" in text)
    assert issue.line == line and issue.file == str(path) and issue.value == role


def test_two_prefixes_for_one_role_are_ambiguous(seeded, netbox_db, tmp_path):
    role = seeded.ipam.roles.get(slug="fabric-p2p")
    site = seeded.dcim.sites.get(slug="nb-lab")
    extra = seeded.ipam.prefixes.create(prefix="10.78.0.0/24", role=role.id, scope_type="dcim.site", scope_id=site.id)
    try:
        with pytest.raises(IntentError) as info:
            load_intent(INTENT, pool_lookup=prefix_lookup(netbox_db.url, netbox_db.token))
        (issue,) = [i for i in info.value.issues if i.rule == "netbox-pool-missing"]
        assert issue.path == "addressing.leaf_spine" and "2 prefixes" in issue.message
        assert "10.77.0.0/24" in issue.message and "10.78.0.0/24" in issue.message
    finally:
        extra.delete()


def test_cli_resolves_pools_and_reports_netbox_errors_in_one_line(seeded, netbox_db, tmp_path):
    env = {**os.environ, "NETBOX_URL": netbox_db.url, "NETBOX_TOKEN": netbox_db.token}
    hwaac = [sys.executable, "-m", "hwaac.cli"]
    ok = subprocess.run([*hwaac, "validate", str(INTENT)], env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert netbox_db.token not in ok.stdout + ok.stderr
    bad = subprocess.run(
        [*hwaac, "validate", str(INTENT)],
        env={**env, "NETBOX_TOKEN": "nbt_wrong.token"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "nbt_wrong" not in bad.stderr
    down = subprocess.run(
        [*hwaac, "validate", str(INTENT)],
        env={**env, "NETBOX_URL": "http://127.0.0.1:9"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert down.returncode == 2 and "unreachable" in down.stderr and len(down.stderr.strip().splitlines()) == 1


def test_lookup_errors_never_carry_the_token(netbox_db):
    lookup = prefix_lookup(netbox_db.url, "nbt_abc.secret-value")
    with pytest.raises(NetBoxError) as info:
        lookup(load_intent_ref(), "nb-lab")
    assert "secret-value" not in str(info.value)


def load_intent_ref():
    from hwaac.model.intent import NetBoxPrefixRef

    return NetBoxPrefixRef(netbox_role="fabric-p2p")
