"""Build a fake sysfs/configfs tree for the RoCE host settings (plain files in a test's tmp directory).

Layout (the real paths under ``/sys`` and ``/sys/kernel/config``; see
plugins/module_utils/roce_sysfs.py for their sources)::

    <sys>/class/net/<if>/mtu                                 "1500"
    <sys>/class/net/<if>/ecn/roce_np/enable/<0..7>           "0"
    <sys>/class/net/<if>/ecn/roce_rp/enable/<0..7>           "0"
    <sys>/class/net/<if>/ecn/roce_np/cnp_dscp                "0"
    <sys>/class/net/<if>/ecn/roce_np/cnp_802p_prio           "0"
    <sys>/class/infiniband/<hca>/tc/1/traffic_class          ""   (no global tclass set)
    <configfs>/rdma_cm/                                      (configfs mounted, no device group yet)

A plain file cannot print ``Global tclass=N`` the way the kernel does after ``echo N``; it keeps ``N``, which
the parser accepts (documented there).
"""

from __future__ import annotations

from pathlib import Path


def build_roce_tree(
    sys_root: Path,
    configfs_root: Path,
    ports: list[tuple[str, str]],
    *,
    mtu: int = 1500,
    ecn: int = 0,
    traffic_class: str = "",
) -> None:
    """Create the files for ``ports`` = ``[(interface, hca), ...]`` with the given starting values."""
    for interface, hca in ports:
        net = sys_root / "class" / "net" / interface
        net.mkdir(parents=True, exist_ok=True)
        (net / "mtu").write_text(f"{mtu}\n")
        for role in ("np", "rp"):
            enable = net / "ecn" / f"roce_{role}" / "enable"
            enable.mkdir(parents=True, exist_ok=True)
            for prio in range(8):
                (enable / str(prio)).write_text(f"{ecn}\n")
        (net / "ecn" / "roce_np" / "cnp_dscp").write_text("0\n")
        (net / "ecn" / "roce_np" / "cnp_802p_prio").write_text("0\n")
        tc = sys_root / "class" / "infiniband" / hca / "tc" / "1"
        tc.mkdir(parents=True, exist_ok=True)
        (tc / "traffic_class").write_text(traffic_class)
    (configfs_root / "rdma_cm").mkdir(parents=True, exist_ok=True)
