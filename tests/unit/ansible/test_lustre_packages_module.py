"""aiinfra.hwaac.lustre_client_packages run as Ansible runs it (tests/unit/ansible/module_run.py), with the modinfo
and ofed_info fakes (tests/fakes/bin) and, for the package manager, a stub in the test's own bin folder that keeps
the installed packages in a JSON file and prints rpm's / dpkg-query's real formats (``package NAME is not
installed``; ``dpkg-query: no packages found matching NAME``). The fake host is tests/unit/ansible/fake_host.py; the
cases that are data are in tests/unit/ansible/cases/lustre_packages.yml."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.unit.ansible.fake_host import FAKE_BIN, FakeHost
from tests.unit.ansible.lustre_node_samples import SYMVERS, VERSIONS, make_elf
from tests.unit.ansible.module_run import REPO, load_cases, run_case

UBUNTU_K = "5.15.0-105-generic"
EL_K = "5.14.0-427.13.1.el9_4.x86_64"
UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'

PKG_STUB = """#!{python}
import json, os, re, sys
tool = os.path.basename(sys.argv[0])
path = os.path.join(os.environ["HWAAC_STUB"], "pkgs.json")
state = json.load(open(path)) if os.path.exists(path) else {{}}
installed = state.setdefault("installed", {{}})
with open(os.path.join(os.environ["HWAAC_FAKE_STATE"], "calls.log"), "a") as fh:
    fh.write(" ".join([tool, *sys.argv[1:]]) + "\\n")
if tool == "rpm":
    names = [a for a in sys.argv[2:] if a != "--qf" and "%" not in a]
    missing = 0
    for name in names:
        if name in installed:
            print(name, installed[name])
        else:
            print(f"package {{name}} is not installed")
            missing += 1
    sys.exit(missing)
if tool == "dpkg-query":
    rc = 0
    for name in [a for a in sys.argv[2:] if not a.startswith("-")]:
        if name in installed:
            print(f"{{name}} {{installed[name]}} ii ")
        else:
            sys.stderr.write(f"dpkg-query: no packages found matching {{name}}\\n")
            rc = 1
    sys.exit(rc)
if tool in ("dnf", "yum", "apt-get"):
    if state.get("fail_install"):
        sys.stderr.write("E: Unable to locate package " + sys.argv[-1] + "\\n")
        sys.exit(100)
    repo = state.get("repo_version", "2.15.5-1")  # the version the repository has of every package
    for spec in [a for a in sys.argv[2:] if not a.startswith("-")]:
        if tool == "apt-get":  # name=VERSION* (prefix match) or name
            name, _eq, pin = spec.partition("=")
            ok = not pin or (repo.startswith(pin[:-1]) if pin.endswith("*") else repo == pin)
            error = f"E: Version '{{pin}}' for '{{name}}' was not found\\n"
        else:  # name-VERSION (a version of three or four numbers) or name
            m = re.match(r"^(.+)-(\\d+\\.\\d+\\.\\d+(?:\\.\\d+)?)$", spec)
            name, pin = (m.group(1), m.group(2)) if m else (spec, "")
            ok = not pin or repo.split("-")[0] == pin
            error = f"No match for argument: {{spec}}\\nError: Unable to find a match: {{spec}}\\n"
        if not ok:
            sys.stderr.write(error)
            sys.exit(100 if tool == "apt-get" else 1)
        installed[name] = repo
    json.dump(state, open(path, "w"))
    sys.exit(0)
sys.exit(99)
"""


class Host(FakeHost):
    """The fake host with the modinfo and ofed_info fakes and the package manager stub in its own bin folder, and
    only that folder before the system's on PATH (no other fake)."""

    module_name = "lustre_client_packages"

    def __init__(self, tmp: Path) -> None:
        stub = tmp / "stub"
        super().__init__(tmp, state="state", bins=(stub,), tail=f"/usr/bin{os.pathsep}/bin", HWAAC_STUB=str(stub))
        self.stub = stub
        self.stub.mkdir()
        for tool in ("rpm", "dpkg-query", "dnf", "apt-get"):
            path = self.stub / tool
            path.write_text(PKG_STUB.format(python=sys.executable))
            path.chmod(0o755)
        for tool in ("modinfo", "ofed_info"):
            (self.stub / tool).symlink_to(FAKE_BIN / tool)

    def placeholders(self) -> dict[str, str]:
        return {**super().placeholders(), "UBUNTU_K": UBUNTU_K, "EL_K": EL_K}

    def os_release(self, text: str) -> str:
        path = self.tmp / "os-release"
        path.write_text(text)
        return str(path)

    def packages(
        self, installed: dict[str, str] | None = None, fail_install: bool = False, repo_version: str = "2.15.5-1"
    ) -> None:
        (self.stub / "pkgs.json").write_text(
            json.dumps({"installed": installed or {}, "fail_install": fail_install, "repo_version": repo_version})
        )

    def installed(self) -> dict[str, str]:
        path = self.stub / "pkgs.json"
        return json.loads(path.read_text())["installed"] if path.exists() else {}

    def knob(self, name: str, value: dict) -> None:
        self.write_state(name, value)

    def module(self, *, check: bool = False, **args: object) -> dict:
        return self.run(args, check=check)


def warnings_of(res: dict) -> list[str]:
    """The module.warn messages of a result (ansible-core 2.19+ returns WarningSummary objects, older strings)."""
    return [w["event"]["msg"] if isinstance(w, dict) else w for w in res.get("warnings", [])]


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


@pytest.mark.parametrize("case", load_cases("lustre_packages"))
def test_case(host: Host, case: dict) -> None:
    run_case(host, case)


def test_ubuntu_doca_installs_dkms_then_verifies_and_is_idempotent(host: Host) -> None:
    release = host.os_release(UBUNTU)
    res = host.module(os_release=release, kernel_release=UBUNTU_K)
    assert not res.get("failed"), res.get("msg")
    assert (res["family"], res["flavor"], res["ofed"]["stack"]) == ("Debian", "dkms", "DOCA-OFED")
    assert res["packages"] == ["lustre-client-utils", "lustre-client-modules-dkms", f"linux-headers-{UBUNTU_K}"]
    assert res["missing"] == res["packages"] and res["changed"] is True
    assert res["commands"] == [["apt-get", "install", "-y", "--no-install-recommends", *res["packages"]]]
    assert res["installed"] == dict.fromkeys(res["packages"], "2.15.5-1")
    assert res["diff"] == {"before": {"installed": []}, "after": {"installed": sorted(res["packages"])}}
    o2ib = res["o2ib"]
    assert o2ib["ok"] and o2ib["built_for"]["kernel"] == UBUNTU_K
    assert o2ib["running"] == {"kernel": UBUNTU_K, "rdma_stack": "OFED-internal-24.07-0.6.1"}
    assert "modinfo -k 5.15.0-105-generic ko2iblnd" in host.calls()
    again = host.module(os_release=release, kernel_release=UBUNTU_K)
    assert again["changed"] is False and again["missing"] == [] and again["commands"] == []
    assert sum(call.startswith("apt-get") for call in host.calls()) == 1


def test_check_mode_predicts_and_installs_nothing(host: Host) -> None:
    host.knob("modinfo.json", {"ko2iblnd": {"installed": False}})
    res = host.module(check=True, os_family="Debian", kernel_release=UBUNTU_K)
    assert res["changed"] is True and res["commands"][0][:2] == ["apt-get", "install"]
    assert res["o2ib"]["ok"] is None and "verified after the install" in res["o2ib"]["deferred"]
    assert host.installed() == {} and not any(c.startswith("apt-get") for c in host.calls())


def test_no_install_and_no_module_fails_with_the_packages_to_install(host: Host) -> None:
    host.knob("modinfo.json", {"ko2iblnd": {"installed": False}})
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, install=False)
    assert res["failed"] and res["changed"] is False and res["commands"] == []
    assert res["msg"].endswith(
        f"ko2iblnd (the o2ib LND) is not installed for the running kernel {UBUNTU_K} "
        "(running OFED-internal-24.07-0.6.1): install the kmod built for this kernel and "
        "stack (lustre-client-utils, lustre-client-modules-dkms, "
        f"linux-headers-{UBUNTU_K}), or rebuild it with DKMS against the running stack "
        f"(dkms autoinstall -k {UBUNTU_K}, with the ofa_kernel sources (mlnx-ofa_kernel-devel"
        " / mlnx-ofed-kernel-dkms) installed)"
    )
    assert not any(c.startswith("apt-get") for c in host.calls())


def test_symbol_crcs_of_the_module_file_against_the_stack_symvers(host: Host) -> None:
    ko = host.tmp / "ko2iblnd.ko"
    ko.write_bytes(make_elf(VERSIONS))
    symvers = host.tmp / "Module.symvers"
    symvers.write_text(SYMVERS)
    host.knob("modinfo.json", {"ko2iblnd": {"filename": str(ko)}})
    host.packages(
        {
            "lustre-client-utils": "2.15.5-1",
            "lustre-client-modules-dkms": "2.15.5-1",
            f"linux-headers-{UBUNTU_K}": "5.15.0-105.115",
        }
    )
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, symvers=str(symvers))
    assert not res.get("failed"), res.get("msg")
    assert res["o2ib"]["crc"] == {"checked": 2, "symvers": str(symvers), "note": "", "complete": True}
    assert not [w for w in warnings_of(res) if "partial check" in w]
    ko.write_bytes(make_elf({**VERSIONS, "rdma_create_id": 0xFEEDFACE}))
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, symvers=str(symvers))
    assert res["failed"] and "rdma_create_id (ko2iblnd has 0xfeedface" in res["msg"]
    symvers.unlink()
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, symvers=str(symvers))
    assert not res.get("failed") and res["o2ib"]["crc"]["checked"] == 0
    assert "no Module.symvers of the running RDMA stack" in res["o2ib"]["crc"]["note"]
    [warning] = [w for w in warnings_of(res) if "partial check" in w]  # module.warn: Ansible shows it
    assert f"no Module.symvers of the running RDMA stack at {symvers}" in warning
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, symvers=str(symvers), strict_o2ib=True)
    assert res["failed"] and "partial check" in res["msg"] and "strict_o2ib" in res["msg"]
    assert res["o2ib"]["crc"]["complete"] is False


def test_fakes_print_the_recorded_formats(host: Host) -> None:
    """modinfo / ofed_info fakes against the fixtures they follow (tests/fixtures/tools/{modinfo,ofed_info})."""
    import subprocess

    from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import parse_modinfo

    env = {**os.environ, "HWAAC_FAKE_STATE": str(host.state)}
    fake = subprocess.run(
        [str(FAKE_BIN / "modinfo"), "-k", UBUNTU_K, "ko2iblnd"], env=env, capture_output=True, text=True, check=True
    ).stdout
    recorded = (REPO / "tests/fixtures/tools/modinfo/ko2iblnd_dkms_mofed_ubuntu_derived.txt").read_text()
    got, want = parse_modinfo(fake), parse_modinfo(recorded)
    for field in (
        "filename",
        "license",
        "version",
        "description",
        "author",
        "srcversion",
        "depends",
        "name",
        "vermagic",
    ):
        assert got[field] == want[field], field
    assert fake.splitlines()[0] == recorded.splitlines()[0]  # the 16-column layout
    only = subprocess.run(
        [str(FAKE_BIN / "modinfo"), "-k", UBUNTU_K, "-F", "depends", "ko2iblnd"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert only == "lnet,libcfs,rdma_cm,ib_core,mlx_compat\n"
    missing = subprocess.run([str(FAKE_BIN / "modinfo"), "ib_nothing"], env=env, capture_output=True, text=True)
    assert (missing.returncode, missing.stderr) == (1, "modinfo: ERROR: Module ib_nothing not found.\n")
    ofed = subprocess.run([str(FAKE_BIN / "ofed_info"), "-s"], env=env, capture_output=True, text=True, check=True)
    assert ofed.stdout == (REPO / "tests/fixtures/tools/ofed_info/doca_ofed_24.07_network_operator.txt").read_text()


# --- client_version -----------------------------------------------------------------------------------------------

EL_PKGS = {"lustre-client": "2.16.1-1.el9", "kmod-lustre-client": "2.16.1-1.el9"}


def test_installed_release_other_than_client_version_fails_naming_both(host: Host) -> None:
    host.knob("ofed.json", {"installed": False})
    host.packages(EL_PKGS)
    res = host.module(os_family="RedHat", kernel_release=EL_K, client_version="2.15.5")
    assert res["failed"] and res["changed"] is False and res["commands"] == []
    msg = res["msg"]
    assert "lustre-client 2.16.1-1.el9 (2.16), kmod-lustre-client 2.16.1-1.el9 (2.16)" in msg
    assert "client_version is 2.15.5 (release 2.15)" in msg
    assert "lustre-client-2.15.5 kmod-lustre-client-2.15.5" in msg and "or set client_version to 2.16" in msg
    assert res["version_check"] == {
        "client_version": "2.15.5",
        "release": "2.15",
        "packages": ["lustre-client", "kmod-lustre-client"],
        "mismatched": ["lustre-client 2.16.1-1.el9 (2.16)", "kmod-lustre-client 2.16.1-1.el9 (2.16)"],
    }
    assert not any(c.startswith(("dnf", "modinfo")) for c in host.calls())  # failed before anything else
    same_line = host.module(os_family="RedHat", kernel_release=EL_K, client_version="2.16.0")  # another patch level
    assert not same_line.get("failed"), same_line.get("msg")
    assert same_line["version_check"]["mismatched"] == []


def test_install_pins_the_lustre_packages_to_client_version(host: Host) -> None:
    res = host.module(os_family="Debian", kernel_release=UBUNTU_K, client_version="2.15.5")
    assert not res.get("failed"), res.get("msg")
    assert res["commands"] == [
        [
            "apt-get",
            "install",
            "-y",
            "--no-install-recommends",
            "lustre-client-utils=2.15.5*",
            "lustre-client-modules-dkms=2.15.5*",
            f"linux-headers-{UBUNTU_K}",
        ]
    ]
    assert res["installed"]["lustre-client-utils"] == "2.15.5-1" and res["version_check"]["mismatched"] == []
    again = host.module(os_family="Debian", kernel_release=UBUNTU_K, client_version="2.15.5")
    assert again["changed"] is False and again["commands"] == []
