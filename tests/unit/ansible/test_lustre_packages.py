"""plugins/module_utils/lustre_packages.py: the package choice per distribution, installed-package parsing, the
o2ib verification (modinfo against ofed_info and the running kernel) and the symbol-CRC check on synthetic ELF
modules. Expected values come from the fixtures' README sources and the rules in the module's docstring."""

from __future__ import annotations

import gzip
import lzma
import struct
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import (
    check_client_version,
    choose_flavor,
    client_packages,
    install_command,
    install_specs,
    kernel_of_vermagic,
    lustre_packages,
    os_family,
    parse_dpkg_query,
    parse_modinfo,
    parse_ofed_info,
    parse_rpm_query,
    query_command,
    release_of,
    verify_o2ib,
    version_mismatches,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_symvers import (
    crc_mismatches,
    module_versions,
    parse_symvers,
    read_module_file,
    symvers_candidates,
)

TOOLS = Path(__file__).parents[2] / "fixtures" / "tools"
MODINFO = TOOLS / "modinfo"
OFED = TOOLS / "ofed_info"
UBUNTU_K = "5.15.0-105-generic"
EL94_K = "5.14.0-427.13.1.el9_4.x86_64"
EL95_K = "5.14.0-503.14.1.el9_5.x86_64"


def ofed(name: str) -> dict:
    return parse_ofed_info((OFED / name).read_text(), 0)


INBOX = parse_ofed_info("", None)
DOCA = ofed("doca_ofed_24.07_network_operator.txt")
MOFED = ofed("mlnx_ofed_23.10_azure.txt")


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


# --- modinfo and the verification ---------------------------------------------------------------------------------


def test_modinfo_fields_of_real_captures() -> None:
    inbox = parse_modinfo((MODINFO / "ib_core_inbox_ubuntu_5.15_ksmbd574.txt").read_text())
    assert inbox["depends"] == [""] and inbox["alias"][1] == "net-pf-16-proto-20"
    assert kernel_of_vermagic(inbox["vermagic"][0]) == "5.15.0-46-generic"
    mofed = parse_modinfo((MODINFO / "nvme_rdma_mofed_el8.3_gds.txt").read_text())
    assert mofed["depends"] == ["mlx_compat,rdma_cm,ib_core,nvme-core,nvme-fabrics"]
    assert parse_modinfo((MODINFO / "ib_core_mofed_dkms_ubuntu_5.4.txt").read_text())["depends"] == ["mlx_compat"]


def verify(name: str, stack: dict, kernel: str, rc: int = 0, **kw) -> dict:
    text = (MODINFO / name).read_text()
    return verify_o2ib(text if rc == 0 else "", rc, text if rc else "", stack, kernel, **kw)


def test_dkms_mofed_build_on_a_doca_node_passes() -> None:
    result = verify(
        "ko2iblnd_dkms_mofed_ubuntu_derived.txt",
        DOCA,
        UBUNTU_K,
        versions=VERSIONS,
        symvers=parse_symvers(SYMVERS),
        symvers_path="/usr/src/ofa_kernel/default/Module.symvers",
    )
    assert result["ok"] and not result["problems"] and not result["warnings"]
    assert result["crc"]["complete"] is True
    assert result["built_for"] == {"kernel": UBUNTU_K, "rdma_stack": "MLNX_OFED/DOCA (depends on mlx_compat)"}
    assert result["running"] == {"kernel": UBUNTU_K, "rdma_stack": "OFED-internal-24.07-0.6.1"}
    assert result["module"]["depends"] == ["lnet", "libcfs", "rdma_cm", "ib_core", "mlx_compat"]


def test_inkernel_kmod_on_an_inbox_node_passes() -> None:
    result = verify("ko2iblnd_kmod_inkernel_el9_derived.txt", INBOX, EL94_K)
    assert result["ok"] and result["running"]["rdma_stack"] == "in-kernel RDMA stack"


def test_inkernel_kmod_on_a_mofed_node_fails_with_what_to_do() -> None:
    result = verify(
        "ko2iblnd_kmod_inkernel_el9_derived.txt", MOFED, EL94_K, fix_packages=["lustre-client", "kmod-lustre-client"]
    )
    assert not result["ok"]
    msg = result["msg"]
    assert msg.startswith(
        "ko2iblnd (/lib/modules/5.14.0-427.13.1.el9_4.x86_64/extra/lustre-client/net/ko2iblnd.ko)"
        " was built for kernel 5.14.0-427.13.1.el9_4.x86_64 against the in-kernel RDMA stack"
    )
    assert f"this node runs kernel {EL94_K} with MLNX_OFED_LINUX-23.10-1.1.9.0" in msg
    assert "dkms autoinstall -k 5.14.0-427.13.1.el9_4.x86_64" in msg and "ofa_kernel" in msg
    assert "kmod-lustre-client" in msg


def test_mofed_build_on_an_inbox_node_fails() -> None:
    result = verify("ko2iblnd_dkms_mofed_ubuntu_derived.txt", INBOX, UBUNTU_K)
    assert not result["ok"] and "depends on mlx_compat" in result["problems"][0]


def test_module_built_for_another_kernel_fails() -> None:
    result = verify("ko2iblnd_dkms_mofed_ubuntu_derived.txt", DOCA, "5.15.0-107-generic")
    assert not result["ok"]
    assert result["problems"] == ["built for kernel 5.15.0-105-generic, running kernel 5.15.0-107-generic"]


def test_weak_updates_is_a_warning_on_inbox_and_a_failure_with_ofed() -> None:
    ok = verify("ko2iblnd_weak_updates_el9_derived.txt", INBOX, EL95_K)
    assert ok["ok"] and "weak-modules" in ok["warnings"][0]
    bad = verify("ko2iblnd_weak_updates_el9_derived.txt", DOCA, EL95_K)
    assert not bad["ok"] and any("kABI does not cover" in p for p in bad["problems"])


def test_not_installed_names_kernel_and_fix() -> None:
    result = verify(
        "ko2iblnd_not_found_derived.txt",
        DOCA,
        UBUNTU_K,
        rc=1,
        fix_packages=["lustre-client-utils", "lustre-client-modules-dkms"],
    )
    assert not result["ok"]
    assert result["problems"] == [
        f"ko2iblnd is not installed for kernel {UBUNTU_K} (modinfo: ERROR: Module ko2iblnd not found.)"
    ]
    assert result["msg"].startswith(
        f"ko2iblnd (the o2ib LND) is not installed for the running kernel {UBUNTU_K} "
        "(running OFED-internal-24.07-0.6.1)"
    )


def test_unknown_rdma_stack_never_passes() -> None:
    unknown = parse_ofed_info("garbage", 0)
    result = verify("ko2iblnd_dkms_mofed_ubuntu_derived.txt", unknown, UBUNTU_K)
    assert not result["ok"] and "RDMA stack is unknown" in result["problems"][0]


def test_in_kernel_link_target_counts_as_in_kernel_build() -> None:
    text = (MODINFO / "ko2iblnd_kmod_inkernel_el9_derived.txt").read_text()
    result = verify_o2ib(
        text, 0, "", DOCA, EL94_K, real_filename=f"/lib/modules/{EL94_K}/extra/lustre-client/net/in-kernel-ko2iblnd.ko"
    )
    assert result["built_for"]["rdma_stack"] == "in-kernel RDMA stack (in-kernel-ko2iblnd.ko)"
    assert not result["ok"]


# --- symbol CRCs --------------------------------------------------------------------------------------------------


def make_elf(versions: dict[str, int], *, is64: bool = True, little: bool = True) -> bytes:
    """A minimal relocatable ELF: null section, __versions (struct modversion_info entries), .shstrtab."""
    e = "<" if little else ">"
    crc_fmt, crc_size = ("Q", 8) if is64 else ("I", 4)
    data = b"".join(
        struct.pack(e + crc_fmt, crc) + name.encode().ljust(64 - crc_size, b"\0") for name, crc in versions.items()
    )
    shstrtab = b"\0__versions\0.shstrtab\0"
    ehsize = 64 if is64 else 52
    data_off = ehsize
    str_off = data_off + len(data)
    sh_off = str_off + len(shstrtab)
    if is64:

        def sh(name, typ, off, size):
            return struct.pack(e + "IIQQQQIIQQ", name, typ, 0, 0, off, size, 0, 0, 1, 0)

        header = (
            b"\x7fELF\x02"
            + (b"\x01" if little else b"\x02")
            + b"\x01"
            + b"\0" * 9
            + struct.pack(e + "HHIQQQIHHHHHH", 1, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 3, 2)
        )
    else:

        def sh(name, typ, off, size):
            return struct.pack(e + "IIIIIIIIII", name, typ, 0, 0, off, size, 0, 0, 1, 0)

        header = (
            b"\x7fELF\x01"
            + (b"\x01" if little else b"\x02")
            + b"\x01"
            + b"\0" * 9
            + struct.pack(e + "HHIIIIIHHHHHH", 1, 3, 1, 0, 0, sh_off, 0, 52, 0, 0, 40, 3, 2)
        )
    sections = sh(0, 0, 0, 0) + sh(1, 1, data_off, len(data)) + sh(12, 3, str_off, len(shstrtab))
    return header + data + shstrtab + sections


VERSIONS = {
    "module_layout": 0x1A2B3C4D,
    "rdma_create_id": 0xDEADBEEF,
    "ib_dereg_mr_user": 0x01234567,
    "lnet_notify": 0x0BADF00D,
}
SYMVERS = (
    "0xdeadbeef\trdma_create_id\tdrivers/infiniband/core/rdma_cm\tEXPORT_SYMBOL\t\n"
    "0x01234567\tib_dereg_mr_user\tdrivers/infiniband/core/ib_core\tEXPORT_SYMBOL\t\n"
    "0x99999999\tib_unrelated\tdrivers/infiniband/core/ib_core\tEXPORT_SYMBOL_GPL\t\n"
)


@pytest.mark.parametrize(("is64", "little"), [(True, True), (True, False), (False, True)])
def test_module_versions_of_synthetic_elf(is64: bool, little: bool) -> None:
    assert module_versions(make_elf(VERSIONS, is64=is64, little=little)) == VERSIONS


def test_module_versions_rejects_non_elf_and_reads_compressed() -> None:
    assert module_versions(b"not an elf at all" * 10) is None
    assert module_versions(make_elf(VERSIONS)[:60]) is None  # truncated
    elf = make_elf(VERSIONS)
    assert read_module_file(lzma.compress(elf), "ko2iblnd.ko.xz") == elf
    assert read_module_file(gzip.compress(elf), "ko2iblnd.ko.gz") == elf
    assert read_module_file(b"zstd frame", "ko2iblnd.ko.zst") is None
    assert read_module_file(b"garbage", "ko2iblnd.ko.xz") is None


def test_crc_compare() -> None:
    symvers = parse_symvers(SYMVERS)
    assert symvers["rdma_create_id"] == (0xDEADBEEF, "drivers/infiniband/core/rdma_cm")
    assert crc_mismatches(VERSIONS, symvers) == ([], 2)  # module_layout and lnet_notify are not in this file
    changed = {**VERSIONS, "rdma_create_id": 0xFEEDFACE}
    bad, compared = crc_mismatches(changed, symvers)
    assert compared == 2 and bad == [
        "rdma_create_id (ko2iblnd has 0xfeedface, drivers/infiniband/core/rdma_cm exports 0xdeadbeef)"
    ]


def test_crc_mismatch_fails_the_verification() -> None:
    text = (MODINFO / "ko2iblnd_dkms_mofed_ubuntu_derived.txt").read_text()
    path = f"/usr/src/ofa_kernel/x86_64/{UBUNTU_K}/Module.symvers"
    good = verify_o2ib(
        text, 0, "", DOCA, UBUNTU_K, versions=VERSIONS, symvers=parse_symvers(SYMVERS), symvers_path=path
    )
    assert good["ok"] and good["crc"]["checked"] == 2
    bad = verify_o2ib(
        text,
        0,
        "",
        DOCA,
        UBUNTU_K,
        versions={**VERSIONS, "ib_dereg_mr_user": 7},
        symvers=parse_symvers(SYMVERS),
        symvers_path=path,
    )
    assert not bad["ok"] and "1 symbol version(s) disagree with " + path in bad["msg"]


def test_symvers_candidates() -> None:
    assert symvers_candidates("DOCA-OFED", UBUNTU_K, "x86_64") == [
        f"/usr/src/ofa_kernel/x86_64/{UBUNTU_K}/Module.symvers",
        "/usr/src/ofa_kernel/default/Module.symvers",
    ]
    assert symvers_candidates("inbox", EL94_K, "x86_64")[0] == f"/lib/modules/{EL94_K}/build/Module.symvers"


# --- partial checks -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        (
            {"crc_note": "no Module.symvers of the running RDMA stack at /usr/src/ofa_kernel/default/Module.symvers"},
            "no Module.symvers of the running RDMA stack at /usr/src/ofa_kernel/default/Module.symvers",
        ),
        (
            {
                "crc_note": "/lib/modules/x/updates/dkms/ko2iblnd.ko.zst: no readable __versions section "
                "(compressed with zstd, or no modversions)"
            },
            "ko2iblnd.ko.zst: no readable __versions section",
        ),
        (
            {
                "versions": VERSIONS,
                "symvers": parse_symvers("0x1\tother\tvmlinux\tEXPORT_SYMBOL\t\n"),
                "symvers_path": "/s/Module.symvers",
            },
            "no symbol ko2iblnd imports is exported in /s/Module.symvers",
        ),
        (
            {"versions": VERSIONS, "symvers": {}, "symvers_path": "/s/Module.symvers"},
            "/s/Module.symvers lists no symbol",
        ),
        ({}, "the module file was not read"),
    ],
)
def test_ofed_node_without_a_crc_comparison_is_a_partial_check(kw: dict, why: str) -> None:
    """On MLNX_OFED/DOCA the vermagic and the mlx_compat dependency cannot tell one OFED release from another:
    without the CRC comparison the verification says it was partial (a warning), or fails with ``strict``."""
    result = verify("ko2iblnd_dkms_mofed_ubuntu_derived.txt", DOCA, UBUNTU_K, **kw)
    assert result["ok"] and result["crc"]["complete"] is False
    [warning] = [w for w in result["warnings"] if w.startswith("partial check")]
    assert why in warning and "mlnx-ofa_kernel-devel" in warning
    strict = verify("ko2iblnd_dkms_mofed_ubuntu_derived.txt", DOCA, UBUNTU_K, strict=True, **kw)
    assert not strict["ok"] and any(p.startswith("partial check") and why in p for p in strict["problems"])
    assert "strict_o2ib" in strict["msg"]


def test_inbox_node_without_symvers_is_not_flagged_partial() -> None:
    """kABI-tracking kmods on the in-kernel stack are covered by the RPM's kernel(symbol) requirements
    (redhat-rpm-config's ``find-requires.ksyms`` for lustre.spec.in's ``%kernel_module_package``); the
    partial-check warning is about MLNX_OFED/DOCA, whose ofa_kernel symbols kABI does not cover."""
    result = verify("ko2iblnd_kmod_inkernel_el9_derived.txt", INBOX, EL94_K, strict=True)
    assert result["ok"] and not result["warnings"] and result["crc"]["complete"] is False
