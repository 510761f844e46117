"""plugins/module_utils/lustre_packages.py: the package choice per distribution, installed-package parsing and the
client version. The o2ib verification and the symbol-CRC check: test_lustre_o2ib_verify.py. Expected values come
from the fixtures' README sources and the rules in the module's docstring."""

from __future__ import annotations

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import (
    check_client_version,
    choose_flavor,
    client_packages,
    install_command,
    install_specs,
    lustre_packages,
    os_family,
    parse_dpkg_query,
    parse_ofed_info,
    parse_rpm_query,
    query_command,
    release_of,
    version_mismatches,
)
from tests.unit.ansible.lustre_node_samples import EL94_K, TOOLS, UBUNTU_K, ofed

# --- distribution and RDMA stack ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ('NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n', "RedHat"),
        ('ID="rhel"\nVERSION_ID="8.10"\n', "RedHat"),
        ("ID=almalinux\nID_LIKE=\"rhel centos fedora\"\n", "RedHat"),
        ('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n', "Debian"),
        ("ID=debian\nVERSION_ID=\"12\"\n", "Debian"),
        ('ID="sles"\nID_LIKE="suse"\n', None),
        ("", None),
    ],
)
def test_os_family(text: str, family: str | None) -> None:
    assert os_family(text) == family


@pytest.mark.parametrize(
    ("name", "stack", "version"),
    [
        ("mlnx_ofed_23.10_azure.txt", "MLNX_OFED", "MLNX_OFED_LINUX-23.10-1.1.9.0"),
        ("mlnx_ofed_24.10_no_colon.txt", "MLNX_OFED", "MLNX_OFED_LINUX-24.10-1.1.4.0"),
        ("doca_ofed_24.07_network_operator.txt", "DOCA-OFED", "OFED-internal-24.07-0.6.1"),
        ("doca_ofed_24.10_dgx.txt", "DOCA-OFED", "OFED-internal-24.10-1.1.4.0.200"),
    ],
)
def test_ofed_info_samples(name: str, stack: str, version: str) -> None:
    parsed = ofed(name)
    assert (parsed["stack"], parsed["version"], parsed["error"]) == (stack, version, "")


def test_ofed_info_absent_and_unreadable() -> None:
    assert parse_ofed_info("", None)["stack"] == "inbox"
    assert parse_ofed_info("", 127)["stack"] == "inbox"  # command not found
    for out, rc in (("garbage\n", 0), ("MLNX_OFED_LINUX-23.10-1.1.9.0:\n", 1), ("", 0)):
        parsed = parse_ofed_info(out, rc)
        assert parsed["stack"] is None and parsed["error"]


# --- the choice table ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "flavor", "stack", "published", "want"),
    [
        ("RedHat", "auto", "inbox", None, "kmod"),
        ("RedHat", "auto", "inbox", False, "dkms"),
        ("RedHat", "auto", "inbox", True, "kmod"),
        ("RedHat", "auto", "DOCA-OFED", None, "dkms"),
        ("RedHat", "auto", "MLNX_OFED", True, "kmod"),
        ("RedHat", "auto", None, None, "dkms"),
        ("Debian", "auto", "inbox", None, "dkms"),
        ("Debian", "auto", "inbox", True, "kmod"),
        ("Debian", "auto", "DOCA-OFED", False, "dkms"),
        ("Debian", "kmod", "DOCA-OFED", None, "kmod"),  # explicit flavour wins
        ("RedHat", "dkms", "inbox", True, "dkms"),
    ],
)
def test_flavor_rule(family: str, flavor: str, stack: str | None, published: bool | None, want: str) -> None:
    got, reason = choose_flavor(family, flavor, stack, published)
    assert got == want and reason


def test_flavor_rule_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="os_family 'Suse' is not supported; supported: RedHat, Debian"):
        choose_flavor("Suse", "auto", "inbox", None)
    with pytest.raises(ValueError, match="flavor 'rpm' is not one of kmod, dkms, auto"):
        choose_flavor("RedHat", "rpm", "inbox", None)


@pytest.mark.parametrize(
    ("family", "flavor", "packages"),
    [
        ("RedHat", "kmod", ["lustre-client", "kmod-lustre-client"]),
        ("RedHat", "dkms", ["lustre-client", "lustre-client-dkms", f"kernel-devel-{EL94_K}"]),
        ("Debian", "kmod", ["lustre-client-utils", f"lustre-client-modules-{UBUNTU_K}"]),
        ("Debian", "dkms", ["lustre-client-utils", "lustre-client-modules-dkms", f"linux-headers-{UBUNTU_K}"]),
    ],
)
def test_package_table(family: str, flavor: str, packages: list[str]) -> None:
    kernel = EL94_K if family == "RedHat" else UBUNTU_K
    assert client_packages(family, flavor, kernel) == packages


# --- installed packages -------------------------------------------------------------------------------------------


def test_rpm_query_output() -> None:
    names = ["lustre-client", "kmod-lustre-client"]
    argv = query_command("RedHat", names)
    assert argv[:3] == ["rpm", "-q", "--qf"] and argv[3] == "%{NAME} %{VERSION}-%{RELEASE}\n"
    out = "lustre-client 2.15.5-1.el9\npackage kmod-lustre-client is not installed\n"
    assert parse_rpm_query(out, names) == {"lustre-client": "2.15.5-1.el9", "kmod-lustre-client": None}


def test_dpkg_query_output() -> None:
    names = ["lustre-client-utils", "lustre-client-modules-dkms", "linux-headers-5.15.0-105-generic"]
    assert query_command("Debian", names)[:3] == ["dpkg-query", "-W", "-f=${Package} ${Version} ${db:Status-Abbrev}\n"]
    out = "lustre-client-utils 2.15.5-1 ii \nlustre-client-modules-dkms 2.15.5-1 rc \n"
    assert parse_dpkg_query(out, names) == {
        "lustre-client-utils": "2.15.5-1",
        "lustre-client-modules-dkms": None,
        "linux-headers-5.15.0-105-generic": None,
    }


# --- client version -----------------------------------------------------------------------------------------------

RPM = TOOLS / "rpm"
DPKG = TOOLS / "dpkg-query"


@pytest.mark.parametrize(
    ("version", "release"),
    [
        ("2.15.5-1.el8", "2.15"),  # Whamcloud EL (VERSION-RELEASE)
        ("2.15.6-1.fsx26.el9", "2.15"),  # Amazon FSx
        ("2.15.8-1", "2.15"),  # Whamcloud Ubuntu deb
        ("2.14.0-ddn184-1", "2.14"),  # DDN EXAScaler deb
        ("2.14.0", "2.14"),  # Azure AMLFS deb without a Debian revision
        ("1:2.16.1-1", "2.16"),  # a Debian epoch
        ("2.15.5_12_g1a2b3c4-1.el9", "2.15"),  # a build from git (lustre.spec: '-' of the version becomes '_')
        ("2.15", "2.15"),
        ("garbage", None),
        ("", None),
    ],
)
def test_release_of_package_versions(version: str, release: str | None) -> None:
    assert release_of(version) == release


def test_release_of_the_recorded_query_outputs() -> None:
    names = ["lustre-client", "kmod-lustre-client"]
    el8 = parse_rpm_query((RPM / "lustre_2.15.5_whamcloud_el8_derived.stdout").read_text(), names)
    assert {n: release_of(v) for n, v in el8.items()} == {"lustre-client": "2.15", "kmod-lustre-client": "2.15"}
    fsx = parse_rpm_query((RPM / "lustre_2.15.6_fsx_el9_kmod_missing_derived.stdout").read_text(), names)
    assert fsx == {"lustre-client": "2.15.6-1.fsx26.el9", "kmod-lustre-client": None}
    deb = ["lustre-client-utils", "lustre-client-modules-5.15.0-130-generic"]
    ddn = parse_dpkg_query((DPKG / "lustre_2.14_ddn_ubuntu_derived.stdout").read_text(), deb)
    assert version_mismatches(ddn, deb, "2.15.5") == [
        "lustre-client-utils 2.14.0-ddn184-1 (2.14)",
        "lustre-client-modules-5.15.0-130-generic 2.14.0-ddn184-1 (2.14)",
    ]
    real = parse_dpkg_query((DPKG / "format_debian12_real.stdout").read_text(), ["dpkg", "apt", "lustre-client-utils"])
    assert real == {"dpkg": "1.21.22", "apt": "2.6.1", "lustre-client-utils": None}


@pytest.mark.parametrize("value", ["2.15", "v2.15.5", "2.15.5-1", "", "2.x.5", 2.15])
def test_client_version_must_be_a_release_number(value) -> None:
    with pytest.raises(ValueError, match=r"client_version: .* is not a Lustre version: expected MAJOR.MINOR.PATCH"):
        check_client_version(value)
    assert check_client_version("2.15.5") == "2.15.5" and check_client_version("2.12.9.1") == "2.12.9.1"


def test_version_mismatches_compare_major_minor_only() -> None:
    names = ["lustre-client", "kmod-lustre-client"]
    assert version_mismatches({"lustre-client": "2.15.4-1.el9", "kmod-lustre-client": None}, names, "2.15.5") == []
    assert version_mismatches(
        {"lustre-client": "2.16.1-1.el9", "kmod-lustre-client": "2.15.5-1.el9"}, names, "2.15.5"
    ) == ["lustre-client 2.16.1-1.el9 (2.16)"]
    assert version_mismatches({"lustre-client": "weird"}, ["lustre-client"], "2.15.5") == [
        "lustre-client weird (release unreadable)"
    ]


def test_lustre_packages_leave_out_the_kernel_headers() -> None:
    assert lustre_packages("RedHat", "dkms", EL94_K) == ["lustre-client", "lustre-client-dkms"]
    assert lustre_packages("Debian", "kmod", UBUNTU_K) == ["lustre-client-utils", f"lustre-client-modules-{UBUNTU_K}"]


def test_install_specs_pin_the_lustre_packages() -> None:
    """EL: ``name-VERSION`` (dnf(8) "Specifying packages": ``name-[epoch:]version``; yum(8): ``name-ver``);
    Debian: ``name=VERSION*`` (apt-get(8) ``pkg=version``; a trailing ``*`` is a prefix match, apt
    ``apt-pkg/versionmatch.h``), so ``2.15.5*`` takes ``2.15.5-1`` or ``2.15.5-ddn1``."""
    el = ["lustre-client", "lustre-client-dkms", f"kernel-devel-{EL94_K}"]
    assert install_specs("RedHat", el, "2.15.5", el[:2]) == [
        "lustre-client-2.15.5",
        "lustre-client-dkms-2.15.5",
        f"kernel-devel-{EL94_K}",
    ]
    deb = ["lustre-client-utils", "lustre-client-modules-dkms", f"linux-headers-{UBUNTU_K}", "extra-pkg"]
    assert install_specs("Debian", deb, "2.15.5", deb[:2]) == [
        "lustre-client-utils=2.15.5*",
        "lustre-client-modules-dkms=2.15.5*",
        f"linux-headers-{UBUNTU_K}",
        "extra-pkg",
    ]
    assert install_specs("Debian", deb, None, deb[:2]) == deb


def test_install_commands() -> None:
    assert install_command("RedHat", ["kmod-lustre-client"]) == ["dnf", "install", "-y", "kmod-lustre-client"]
    assert install_command("RedHat", ["x"], have_dnf=False)[0] == "yum"
    assert install_command("Debian", ["lustre-client-utils"]) == [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "lustre-client-utils",
    ]
