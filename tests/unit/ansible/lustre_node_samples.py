"""The recorded node tool outputs (tests/fixtures/tools: modinfo, ofed_info), the RDMA stacks read from them, and
synthetic ELF modules with their symbol CRCs; shared by test_lustre_packages.py, test_lustre_o2ib_verify.py and
test_lustre_packages_module.py."""

from __future__ import annotations

import struct
from pathlib import Path

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_packages import parse_ofed_info

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
