"""hwaac.cdk constructs and the cdktn app in cdktf/, checked on the Terraform JSON they synthesize.

The environment jsii needs is set in conftest.py. `import cdktn` (not `from cdktn import Testing`): pytest would
try to collect a module-level `Testing` class and warn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cdktn
import pytest

from hwaac.cdk import (
    DataHwaacFabricPlan,
    DataHwaacNetboxPrefix,
    FabricPlane,
    FabricStack,
    HwaacProvider,
    IpamPool,
    read_fabric_header,
    stack_dir,
)
from hwaac.cdk.paths import relative_to
from hwaac.errors import IntentError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
TWIN = REPO / "inventory" / "examples" / "b300-twin-plane"
NETBOX_POOLS = REPO / "tests" / "fixtures" / "intents" / "netbox" / "pools-from-netbox.yml"


@pytest.fixture
def app(tmp_path: Path) -> Any:
    # An explicit outdir: Testing.app() would otherwise leave a cdktf.outdir.* folder in $TMPDIR for every test.
    return cdktn.Testing.app(outdir=str(tmp_path / "out"))


def synth(stack: Any) -> dict[str, Any]:
    return json.loads(cdktn.Testing.synth(stack))


def hand_stack(app: Any, id: str = "hand") -> Any:
    stack = cdktn.TerraformStack(app, id)
    HwaacProvider(stack, "hwaac")
    return stack


# --- provider -------------------------------------------------------------------------------------------------


def test_provider_requires_aiinfra_hwaac_and_writes_no_credentials_by_default(app, monkeypatch):
    monkeypatch.setenv("NETBOX_URL", "https://netbox.invalid")
    monkeypatch.setenv("NETBOX_TOKEN", "0123456789abcdef-secret")
    doc = synth(hand_stack(app))
    assert doc["terraform"]["required_providers"]["hwaac"] == {"source": "aiinfra/hwaac", "version": "~> 0.1"}
    assert doc["provider"]["hwaac"] == [{}]  # the provider reads NETBOX_URL/NETBOX_TOKEN itself, at run time
    text = json.dumps(doc)
    assert "secret" not in text and "netbox.invalid" not in text


def test_provider_writes_url_and_an_explicit_token_and_alias_selects_it(app):
    stack = cdktn.TerraformStack(app, "s")
    HwaacProvider(stack, "hwaac", url="https://netbox.lab")
    lab2 = HwaacProvider(stack, "lab2", url="https://netbox2.lab", token="t0k", alias="lab2")
    IpamPool(stack, "p", prefix="10.9.0.0/16", role="r", provider=lab2)
    doc = synth(stack)
    assert doc["provider"]["hwaac"] == [
        {"url": "https://netbox.lab"},
        {"url": "https://netbox2.lab", "token": "t0k", "alias": "lab2"},
    ]
    assert doc["resource"]["hwaac_ipam_pool"]["p"]["provider"] == "hwaac.lab2"


# --- FabricStack ----------------------------------------------------------------------------------------------


def test_fabric_stack_demo_has_one_plane_with_an_intent_file_relative_to_the_stack_folder(app):
    stack = FabricStack(app, "demo", intent_file=DEMO)
    doc = synth(stack)
    planes = doc["resource"]["hwaac_fabric_plane"]
    assert list(planes) == ["plane0"]
    assert planes["plane0"]["plane"] == 0
    assert "pools" not in planes["plane0"]
    intent_file = planes["plane0"]["intent_file"]
    assert not os.path.isabs(intent_file)
    folder = Path(app.outdir) / "stacks" / "demo"
    assert stack_dir(stack) == folder
    assert (folder / intent_file).resolve() == DEMO / "fabric.yml"
    assert doc["output"]["plane0_counts"]["value"] == "${hwaac_fabric_plane.plane0.counts}"
    assert doc["output"]["plane0_devices"]["value"] == "${hwaac_fabric_plane.plane0.devices}"


def test_fabric_stack_state_lands_next_to_the_output_folder_not_in_it(app):
    doc = synth(FabricStack(app, "demo", intent_file=DEMO / "fabric.yml"))
    path = doc["terraform"]["backend"]["local"]["path"]
    assert path == "../../../state/demo.tfstate"
    state = (Path(app.outdir) / "stacks" / "demo" / path).resolve()
    assert state == Path(app.outdir).resolve().parent / "state" / "demo.tfstate"


def test_fabric_stack_takes_state_file_and_netbox_url_as_given(app):
    doc = synth(
        FabricStack(app, "demo", intent_file=DEMO, state_file="/srv/tf/demo.tfstate", netbox_url="https://netbox.lab")
    )
    assert doc["terraform"]["backend"]["local"]["path"] == "/srv/tf/demo.tfstate"
    assert doc["provider"]["hwaac"] == [{"url": "https://netbox.lab"}]


def test_fabric_stack_twin_plane_has_one_resource_and_two_outputs_per_plane(app):
    doc = synth(FabricStack(app, "b300-twin-plane", intent_file=TWIN))
    planes = doc["resource"]["hwaac_fabric_plane"]
    assert {k: v["plane"] for k, v in planes.items()} == {"plane0": 0, "plane1": 1}
    assert len({v["intent_file"] for v in planes.values()}) == 1
    assert sorted(doc["output"]) == ["plane0_counts", "plane0_devices", "plane1_counts", "plane1_devices"]


def test_fabric_stack_reads_intents_with_netbox_pools_offline_and_passes_pools(app):
    stack = FabricStack(
        app, "nbpools", intent_file=NETBOX_POOLS, pools={"fabric-p2p": "10.1.0.0/20", "gpu-host-links": "172.16.0.0/16"}
    )
    assert (stack.header.name, stack.header.planes, stack.header.site) == ("nbpools", 1, "nb-lab")  # planes default
    plane = synth(stack)["resource"]["hwaac_fabric_plane"]["plane0"]
    assert plane["pools"] == {"fabric-p2p": "10.1.0.0/20", "gpu-host-links": "172.16.0.0/16"}


def test_relative_intent_paths_in_the_default_layout_stay_inside_the_repository():
    start = REPO / "cdktf" / "cdktf.out" / "stacks" / "demo"
    assert relative_to(DEMO / "fabric.yml", start) == "../../../../inventory/demo/fabric.yml"


# --- intent header --------------------------------------------------------------------------------------------


def test_read_fabric_header_names_file_and_line_of_a_bad_planes(tmp_path):
    bad = tmp_path / "fabric.yml"
    bad.write_text("fabric:\n  name: x\n  planes: 0\n")
    with pytest.raises(IntentError) as err:
        read_fabric_header(tmp_path)
    (issue,) = err.value.issues
    assert (issue.path, issue.line, issue.value, issue.file) == ("fabric.planes", 3, 0, str(bad))


def test_read_fabric_header_rejects_a_missing_name_and_a_missing_file(tmp_path):
    (tmp_path / "fabric.yml").write_text("fabric:\n  site: lab\n")
    with pytest.raises(IntentError, match=r"fabric\.name"):
        read_fabric_header(tmp_path / "fabric.yml")
    with pytest.raises(FileNotFoundError):
        read_fabric_header(tmp_path / "nope")


# a stack reads its intent within the limits every intent read keeps (docs/intent-limits.md)
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)
)
BOMB += "fabric: {name: x}\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (BOMB.encode(), "too many YAML values"),
        (b"fabric:\n  name: caf\xe9\n", "UTF-8"),
        (b"fabric:\n  name: x\x00\n", "control character"),
        (b"fabric: " + b"[" * 40 + b"]" * 40 + b"\n", "32"),
    ],
)
def test_read_fabric_header_keeps_the_intent_limits(tmp_path, content, message):
    (tmp_path / "fabric.yml").write_bytes(content)
    with pytest.raises(IntentError, match=message):
        read_fabric_header(tmp_path)


def test_fabric_stack_fails_before_creating_anything_for_a_bad_intent(app, tmp_path):
    (tmp_path / "fabric.yml").write_text("switches: {}\n")
    with pytest.raises(IntentError, match="fabric"):
        FabricStack(app, "bad", intent_file=tmp_path)
    assert app.node.try_find_child("bad") is None


# --- hand-written stacks ----------------------------------------------------------------------------------------


def test_ipam_pools_feed_a_fabric_plane_by_role_with_interpolations(app):
    stack = hand_stack(app)
    hosts = IpamPool(
        stack, "hosts", prefix="172.16.0.0/16", role="gpu-host-links", site="nb-lab", description="GPU host links"
    )
    p2p = IpamPool(stack, "p2p", prefix="10.1.0.0/20", role="fabric-p2p")
    FabricPlane(
        stack,
        "nb",
        intent_file=NETBOX_POOLS,
        plane=1,
        pools={hosts.role: hosts.prefix, p2p.role: p2p.prefix},
        allow_renumber=False,
        lifecycle={"prevent_destroy": True},
    )
    doc = synth(stack)
    pools = doc["resource"]["hwaac_ipam_pool"]
    assert pools["hosts"] == {
        "prefix": "172.16.0.0/16",
        "role": "gpu-host-links",
        "site": "nb-lab",
        "description": "GPU host links",
    }
    assert pools["p2p"] == {"prefix": "10.1.0.0/20", "role": "fabric-p2p"}
    plane = doc["resource"]["hwaac_fabric_plane"]["nb"]
    assert plane["pools"] == {
        "${hwaac_ipam_pool.hosts.role}": "${hwaac_ipam_pool.hosts.prefix}",
        "${hwaac_ipam_pool.p2p.role}": "${hwaac_ipam_pool.p2p.prefix}",
    }
    assert plane["allow_renumber"] is False and "allow_remove" not in plane
    assert plane["lifecycle"] == {"prevent_destroy": True}
    # a pathlib.Path is a local file: rewritten relative to the stack folder
    assert (Path(app.outdir) / "stacks" / "hand" / plane["intent_file"]).resolve() == NETBOX_POOLS


def test_fabric_plane_keeps_a_str_intent_file_verbatim_and_exposes_attribute_tokens(app):
    stack = hand_stack(app)
    plane = FabricPlane(stack, "p", intent_file="../intents/fabric.yml", plane=2)
    cdktn.TerraformOutput(stack, "id", value=plane.id)
    cdktn.TerraformOutput(stack, "lo", value=plane.device_loopback("leaf-su0-r0"))
    cdktn.TerraformOutput(stack, "asn", value=plane.device_asn("spine-0"))
    cdktn.TerraformOutput(stack, "cables", value=plane.count_of("cables"))
    cdktn.TerraformOutput(stack, "sha", value=plane.intent_sha256)
    cdktn.TerraformOutput(stack, "drift", value=plane.drift)
    doc = synth(stack)
    assert doc["resource"]["hwaac_fabric_plane"]["p"] == {"intent_file": "../intents/fabric.yml", "plane": 2}
    assert {k: v["value"] for k, v in doc["output"].items()} == {
        "id": "${hwaac_fabric_plane.p.id}",
        "lo": '${hwaac_fabric_plane.p.devices["leaf-su0-r0"].loopback}',
        "asn": '${hwaac_fabric_plane.p.devices["spine-0"].asn}',
        "cables": '${hwaac_fabric_plane.p.counts["cables"]}',
        "sha": "${hwaac_fabric_plane.p.intent_sha256}",
        "drift": "${hwaac_fabric_plane.p.drift}",
    }


def test_data_sources_synthesize_and_chain(app):
    stack = hand_stack(app)
    p2p = DataHwaacNetboxPrefix(stack, "p2p", role="fabric-p2p", site="nb-lab")
    plan = DataHwaacFabricPlan(stack, "plan", intent_file=NETBOX_POOLS, pools={"fabric-p2p": p2p.prefix}, plane=1)
    IpamPool(stack, "copy", prefix=p2p.prefix, role="fabric-p2p-copy")  # a token passes the CIDR check
    cdktn.TerraformOutput(stack, "planes", value=plan.planes)
    cdktn.TerraformOutput(stack, "devices", value=plan.devices)
    doc = synth(stack)
    data = doc["data"]
    assert data["hwaac_netbox_prefix"]["p2p"] == {"role": "fabric-p2p", "site": "nb-lab"}
    assert data["hwaac_fabric_plan"]["plan"]["pools"] == {"fabric-p2p": "${data.hwaac_netbox_prefix.p2p.prefix}"}
    assert data["hwaac_fabric_plan"]["plan"]["plane"] == 1
    assert doc["resource"]["hwaac_ipam_pool"]["copy"]["prefix"] == "${data.hwaac_netbox_prefix.p2p.prefix}"
    assert doc["output"]["planes"]["value"] == "${data.hwaac_fabric_plan.plan.planes}"
    assert doc["output"]["devices"]["value"] == "${data.hwaac_fabric_plan.plan.devices}"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda s: IpamPool(s, "x", prefix="10.0.0.1/8", role="r"), "CIDR"),
        (lambda s: IpamPool(s, "x", prefix="not-a-prefix", role="r"), "CIDR"),
        (lambda s: FabricPlane(s, "x", intent_file="f.yml", plane=-1), "count from 0"),
        (lambda s: FabricPlane(s, "x", intent_file="f.yml", plane=1.5), "whole number"),
        (lambda s: DataHwaacFabricPlan(s, "x", intent_file="f.yml", pools={"r": "10.0.0.0/33"}), r"pools\['r'\]"),
    ],
)
def test_literal_arguments_are_checked_at_construct_time(app, make, message):
    with pytest.raises(ValueError, match=message):
        make(hand_stack(app))


# --- the app in cdktf/ --------------------------------------------------------------------------------------------


def run_app(outdir: Path, fabrics: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HWAAC_FABRICS", "CDKTF_OUTDIR")}
    env["HWAAC_CDKTF_OUTDIR"] = str(outdir)
    if fabrics is not None:
        env["HWAAC_FABRICS"] = fabrics
    return subprocess.run(
        [sys.executable, "main.py"],
        cwd=REPO / "cdktf",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_app_synthesizes_one_stack_per_fabric_folder(tmp_path):
    folders = sorted(p.parent for p in (REPO / "inventory").rglob("fabric.yml"))
    names = {read_fabric_header(f).name: f for f in folders}
    assert {"demo", "b300-twin-plane"} <= set(names)
    out = tmp_path / "nested" / "out"  # parents are created by main.py
    proc = run_app(out)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in (out / "stacks").iterdir()} == set(names)
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["stacks"]) == set(names)
    for name, folder in names.items():
        doc = json.loads((out / "stacks" / name / "cdk.tf.json").read_text())
        for plane in doc["resource"]["hwaac_fabric_plane"].values():
            assert (out / "stacks" / name / plane["intent_file"]).resolve() == folder / "fabric.yml"
    twin = json.loads((out / "stacks" / "b300-twin-plane" / "cdk.tf.json").read_text())
    assert len(twin["resource"]["hwaac_fabric_plane"]) == 2


def test_app_honours_hwaac_fabrics_and_rejects_unknown_names(tmp_path):
    proc = run_app(tmp_path / "out", "demo")
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (tmp_path / "out" / "stacks").iterdir()] == ["demo"]
    bad = run_app(tmp_path / "bad", "demo,no-such-fabric")
    assert bad.returncode != 0
    assert "no-such-fabric" in bad.stderr and "b300-twin-plane" in bad.stderr
