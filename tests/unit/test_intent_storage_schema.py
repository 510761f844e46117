"""The intent's ``storage`` section through the loader: schema errors with their file, line, field, value and
what is valid."""

from __future__ import annotations

import copy

import pytest

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.validate import load_intent_source
from tests.unit.storage_intents import MINIMAL, storage, yaml_of

# --- schema errors through the loader: file, line, field, value and what is valid -------------------------


def _load_error(storage_yaml: str) -> IntentError:
    text = MINIMAL.read_text() + storage_yaml  # minimal.yml is 17 lines: "storage:" is line 18
    with pytest.raises(IntentError) as info:
        load_intent_source(text, "f.yml")
    return info.value


def test_peercredits_hiw_is_not_an_lnd_tunable() -> None:
    err = _load_error(
        "storage:\n  client_version: '2.15.5'\n  lnet:\n    networks:\n      - net: o2ib\n"
        "        rails: [0]\n        lnd_tunables: {peercredits_hiw: 16}\n"
    )
    assert str(err) == (
        "f.yml:24: storage.lnet.networks[0].lnd_tunables.peercredits_hiw: unknown field "
        "'peercredits_hiw'; valid: one of concurrent_sends, conns_per_peer, map_on_demand"
    )


def test_packages_and_global_values_are_checked_by_the_schema() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  packages: rpm\n  lnet: {discovery: 2}\n")
    assert [str(i) for i in err.issues] == [
        "f.yml:20: storage.packages: invalid value (got 'rpm'); valid: 'kmod', 'dkms' or 'auto'",
        "f.yml:21: storage.lnet.discovery: invalid value (got 2); valid: 0 or 1",
    ]


def test_max_intf_is_spelled_max_interfaces() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  lnet: {max_intf: 200}\n")
    assert str(err).startswith(
        "f.yml:20: storage.lnet.max_intf: unknown field 'max_intf' (did you mean 'max_interfaces'?)"
    )


def test_client_version_is_required() -> None:
    err = _load_error("storage:\n  packages: kmod\n")
    assert str(err) == "f.yml:18: storage.client_version: required field is missing"  # the storage: line


def test_semantic_errors_point_at_their_line() -> None:
    err = _load_error(
        "storage:\n  client_version: '2.15.5'\n  lnet:\n    networks:\n      - net: o2ib\n"
        "        rails: [0]\n        routes: [10.30.0.0/16]\n  filesystems:\n    - name: lfs1\n"
        "      mgs:\n        - 10.20.0.1@o2ib\n        - 10.20.0.2@tcp\n      mount_point: /mnt/lfs1\n"
    )
    assert [(i.line, i.path, i.rule) for i in err.issues] == [
        (28, "storage.filesystems[0].mgs[0]", "storage-mgs-not-routed"),
        (29, "storage.filesystems[0].mgs[1]", "storage-mgs-net-not-configured"),
    ]


def test_storage_survives_netbox_pool_resolution() -> None:
    # resolve_netbox_pools rebuilds the intent from model_dump(exclude_unset=True): storage must come through
    from hwaac.model.intent import NetBoxPrefixRef
    from hwaac.validate import resolve_netbox_pools

    data = yaml_of(MINIMAL.read_text())
    data["addressing"]["leaf_spine"] = {"netbox_role": "p2p"}
    data["storage"] = copy.deepcopy(storage(lnet={"networks": [{"net": "o2ib", "rails": [0]}], "discovery": 1}))
    intent = Intent.model_validate(data)
    assert isinstance(intent.addressing.leaf_spine, NetBoxPrefixRef)
    out, issues = resolve_netbox_pools(intent, lambda ref, site: "10.1.0.0/24")
    assert issues == [] and out.storage == intent.storage
