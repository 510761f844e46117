"""plugins/module_utils/lustre_packages.py and lustre_symvers.py: the o2ib verification (modinfo against ofed_info
and the running kernel) and the symbol-CRC check on synthetic ELF modules. Expected values come from the fixtures'
README sources and the rules in the modules' docstrings."""

from __future__ import annotations

import gzip
import lzma

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import (
    kernel_of_vermagic,
    parse_modinfo,
    parse_ofed_info,
    verify_o2ib,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_symvers import (
    crc_mismatches,
    module_versions,
    parse_symvers,
    read_module_file,
    symvers_candidates,
)
from tests.unit.ansible.lustre_node_samples import (
    DOCA,
    EL94_K,
    EL95_K,
    INBOX,
    MODINFO,
    MOFED,
    SYMVERS,
    UBUNTU_K,
    VERSIONS,
    make_elf,
)

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
