# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Symbol versions of a kernel module against the running stack's ``Module.symvers``: check 4 of the o2ib
verification in module_utils/lustre_packages.py (``ko2iblnd: disagrees about version of symbol`` at load time).

Pure functions on file contents; standard library only (host side).
"""

from __future__ import annotations

import gzip
import lzma
import struct


def read_module_file(data: bytes, name: str) -> bytes | None:
    """The ELF bytes of a module file's content ``data`` (``.ko``, ``.ko.xz``, ``.ko.gz`` by ``name``'s suffix);
    None for ``.ko.zst`` (no zstd in the standard library) or data that does not decompress. Never raises."""
    try:
        if name.endswith(".xz"):
            return lzma.decompress(data)
        if name.endswith(".gz"):
            return gzip.decompress(data)
    except (lzma.LZMAError, OSError, EOFError):
        return None
    if name.endswith(".zst"):
        return None
    return data


def module_versions(elf: bytes) -> dict[str, int] | None:
    """``symbol -> CRC`` from a kernel module's ``__versions`` section; None when the data is not an ELF with one.

    ``struct modversion_info { unsigned long crc; char name[64 - sizeof(unsigned long)]; }`` (include/linux/
    module.h): 64-byte entries, the CRC in the first 4 or 8 bytes (ELF class), the name NUL-terminated."""
    if len(elf) < 52 or elf[:4] != b"\x7fELF":
        return None
    is64, endian = elf[4] == 2, "<" if elf[5] == 1 else ">"
    try:
        if is64:
            (shoff,) = struct.unpack_from(endian + "Q", elf, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", elf, 0x3A)
        else:
            (shoff,) = struct.unpack_from(endian + "I", elf, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", elf, 0x2E)

        def section(index: int) -> tuple[int, int, int]:  # (name offset, file offset, size)
            base = shoff + index * shentsize
            if is64:
                (name,) = struct.unpack_from(endian + "I", elf, base)
                offset, size = struct.unpack_from(endian + "QQ", elf, base + 0x18)
            else:
                (name,) = struct.unpack_from(endian + "I", elf, base)
                offset, size = struct.unpack_from(endian + "II", elf, base + 0x10)
            return name, offset, size

        _name, str_off, str_size = section(shstrndx)
        names = elf[str_off : str_off + str_size]
        for index in range(shnum):
            name_off, offset, size = section(index)
            end = names.find(b"\0", name_off)
            if names[name_off:end] != b"__versions":
                continue
            crc_format = endian + ("Q" if is64 else "I")
            crc_size = 8 if is64 else 4
            versions = {}
            for entry in range(offset, offset + size - 63, 64):
                (crc,) = struct.unpack_from(crc_format, elf, entry)
                raw = elf[entry + crc_size : entry + 64]
                symbol = raw.split(b"\0", 1)[0].decode("ascii", "replace")
                if symbol:
                    versions[symbol] = crc & 0xFFFFFFFF
            return versions
    except struct.error:
        return None
    return None


def parse_symvers(text: str) -> dict[str, tuple[int, str]]:
    """``Module.symvers`` lines ``0xCRC<TAB>symbol<TAB>module<TAB>EXPORT_TYPE[<TAB>namespace]`` ->
    ``symbol -> (crc, module)`` (the CRC as a 32-bit int; the layout modpost writes, Linux
    ``scripts/mod/modpost.c`` ``write_dump()``); lines that do not start with ``0x`` or carry no hex CRC are
    skipped. Never raises."""
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].startswith("0x"):
            try:
                out[parts[1]] = (int(parts[0], 16) & 0xFFFFFFFF, parts[2])
            except ValueError:
                continue
    return out


def crc_mismatches(versions: dict[str, int], symvers: dict[str, tuple[int, str]]) -> tuple[list[str], int]:
    """``(["SYMBOL (ko2iblnd has 0x.., MODULE exports 0x..)", ...], symbols compared)``: the imported symbols
    whose CRC differs from the exported one (symbols the symvers file does not export are not compared), in
    symbol order. Never raises."""
    bad, compared = [], 0
    for symbol, crc in sorted(versions.items()):
        if symbol not in symvers:
            continue
        compared += 1
        want, module = symvers[symbol]
        if crc != want:
            bad.append(f"{symbol} (ko2iblnd has 0x{crc:08x}, {module} exports 0x{want:08x})")
    return bad, compared


def symvers_candidates(stack: str | None, kernel: str, arch: str) -> list[str]:
    """Paths (``list[str]``, most specific first) where the running RDMA stack's exported symbol CRCs are:
    MLNX_OFED/DOCA's ofa_kernel build tree (``/usr/src/ofa_kernel/<arch>/<kernel>``, ``default``: the
    ``--with-o2ib`` path of NVIDIA's "Lustre" page and ``dkms.mkconf``), else the kernel's build tree. Never
    raises."""
    if stack in ("MLNX_OFED", "DOCA-OFED", "OFED"):
        return [f"/usr/src/ofa_kernel/{arch}/{kernel}/Module.symvers", "/usr/src/ofa_kernel/default/Module.symvers"]
    return [f"/lib/modules/{kernel}/build/Module.symvers", f"/usr/src/kernels/{kernel}/Module.symvers"]
