# Copyright: hwaac maintainers
# Apache-2.0
"""One port's run of the aiinfra.hwaac.roce_qos module: check the desired values, then bring trust, PFC, the DSCP
map, the RoCE ToS, ECN, CNP marking and the MTU to them, each read back. Standard library only (host side).
"""

from __future__ import annotations

import os
from typing import Any

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlnx_qos import (
    MlnxQosError,
    QosState,
    parse_dscp2prio,
    parse_mlnx_qos,
    parse_pfc,
    pfc_to_string,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.per_item import ItemFailure
from ansible_collections.aiinfra.hwaac.plugins.module_utils.roce_sysfs import (
    RoceSysfsError,
    cnp_path,
    ecn_enable_path,
    mtu_path,
    parse_traffic_class,
    rdma_cm_dir,
    read_int,
    read_text,
    traffic_class_path,
    write_text,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_recorded

# The options of one port: the single-port form takes them at the top level, O(ports) once per entry.
PORT_OPTIONS = {
    "interface": {"type": "str", "required": True},
    "hca": {"type": "str"},
    "trust": {"type": "str", "choices": ["pcp", "dscp"]},
    "pfc": {"type": "raw"},
    "dscp2prio": {"type": "dict"},
    "roce_tos": {"type": "int"},
    "roce_tos_cma": {"type": "bool", "default": True},
    "roce_tos_traffic_class": {"type": "bool", "default": True},
    "port": {"type": "int", "default": 1},
    "ecn": {"type": "dict"},
    "ecn_disable_others": {"type": "bool", "default": False},
    "cnp": {"type": "dict"},
    "mtu": {"type": "int"},
}


class Port:
    """One port's run: commands, their outputs and the changes found. An item of :class:`PerItem`: errors raise
    :class:`ItemFailure`.

    ``p`` holds the port's options (:data:`PORT_OPTIONS`) and ``sysfs_root`` / ``configfs_root``.
    """

    def __init__(self, module: Any, p: dict) -> None:
        self.module = module
        self.p = p
        self.name: str = p["interface"]
        self.check_mode = module.check_mode
        self.raw: list[str] = []
        self.changes: dict[str, dict[str, object]] = {}
        self.unverified: dict[str, object] = {}
        self.state: dict[str, object] = {}
        self.wrote = False  # a setting was written (a set command ran or a file was written)
        self.pfc: list[int] | None = None
        self.mapping: dict[int, int] = {}
        self.ecn_wanted: dict[str, set[int]] = {}

    def fail(self, msg: str) -> None:
        raise ItemFailure(msg)

    def check(self) -> None:
        """Check the desired values before anything runs (the same checks for every port of a list)."""
        p = self.p
        try:
            self.pfc = parse_pfc(p["pfc"]) if p["pfc"] is not None else None
            self.mapping = parse_dscp2prio(p["dscp2prio"])
        except MlnxQosError as exc:
            self.fail(str(exc))
        if self.mapping and p["trust"] == "pcp":
            self.fail("dscp2prio needs trust dscp (mlnx_qos shows and uses the map only in that state)")
        if p["roce_tos"] is not None:
            if not 0 <= p["roce_tos"] <= 255:
                self.fail(f"roce_tos must be 0..255, got {p['roce_tos']}")
            if not p["hca"]:
                self.fail("roce_tos needs hca (the RDMA device of the interface)")
        if p["ecn"]:
            unknown = set(p["ecn"]) - {"np_priorities", "rp_priorities"}
            if unknown:
                self.fail(f"ecn takes np_priorities and rp_priorities, not {sorted(unknown)}")
            for role in ("np", "rp"):
                prios = p["ecn"].get(f"{role}_priorities")
                if prios is None:
                    continue
                try:
                    wanted = {int(x) for x in prios}
                except (TypeError, ValueError):
                    self.fail(f"ecn.{role}_priorities must be a list of priorities 0..7, got {prios!r}")
                if any(not 0 <= x <= 7 for x in wanted):
                    self.fail(f"ecn.{role}_priorities must be priorities 0..7, got {prios!r}")
                self.ecn_wanted[role] = wanted
        if p["cnp"]:
            unknown = set(p["cnp"]) - {"dscp", "priority"}
            if unknown:
                self.fail(f"cnp takes dscp and priority, not {sorted(unknown)}")
            for key in ("dscp", "priority"):
                if p["cnp"].get(key) is not None:
                    try:
                        int(p["cnp"][key])
                    except (TypeError, ValueError):
                        self.fail(f"cnp.{key} must be an integer, got {p['cnp'][key]!r}")

    def bin_path(self, name: str) -> str:
        path = self.module.get_bin_path(name)
        if not path:
            self.fail(f'Failed to find required executable "{name}" in paths: {os.environ.get("PATH", "")}')
        return path

    def run(self, cmd: list[str], *, writes: bool = False) -> str:
        ran = run_recorded(self.module, cmd, self.raw)
        self.wrote = self.wrote or writes
        if ran.rc != 0:
            self.fail(f"{' '.join(cmd)} failed (rc={ran.rc}): {ran.text.strip()}")
        return ran.text

    def apply(self) -> dict:
        """Bring the port, checked, to the desired values; returns its result."""
        # MTU first: the RoCE path MTU follows the netdev MTU, and it is the setting most likely to be refused
        self.mtu()
        self.qos()
        self.tos()
        self.ecn()
        self.cnp()
        mlnx = self.state.pop("mlnx_qos", None)
        result: dict[str, object] = {
            "interface": self.p["interface"],
            "changed": bool(self.changes),
            "changes": self.changes,
            "unverified": self.unverified,
            "state": self.state,
            "raw": self.raw,
        }
        if mlnx is not None:
            result["mlnx_qos"] = mlnx
        return result

    def failure(self, exc: ItemFailure) -> dict:
        """The result of a port that failed: the differences found and the commands run up to the failure."""
        return {
            "interface": self.p["interface"],
            "failed": True,
            "msg": exc.msg,
            "changed": self.wrote,
            "changes": self.changes,
            "unverified": self.unverified,
            "raw": self.raw,
        }

    def failure_alone(self, exc: ItemFailure) -> dict:
        """The single form's failure: the commands run and the differences found up to the failure."""
        return {"raw": self.raw, "changes": self.changes}

    def diff(self) -> dict[str, dict[str, object]]:
        return {
            "before": {k: v["before"] for k, v in sorted(self.changes.items())},
            "after": {k: v["after"] for k, v in sorted(self.changes.items())},
        }

    # ---- mlnx_qos: trust, pfc, dscp2prio ------------------------------------------------------------------------

    def qos_read(self, exe: str) -> QosState:
        try:
            return parse_mlnx_qos(self.run([exe, "-i", self.p["interface"]]))
        except MlnxQosError as exc:
            self.fail(str(exc))
            raise

    def qos(self) -> None:
        p = self.p
        pfc, mapping = self.pfc, self.mapping
        if p["trust"] is None and pfc is None and not mapping:
            return
        exe = self.bin_path("mlnx_qos")
        iface = p["interface"]
        cur = self.qos_read(exe)
        args: list[str] = []
        if p["trust"] is not None and cur.trust != p["trust"]:
            self.changes["trust"] = {"before": cur.trust, "after": p["trust"]}
            args += ["--trust", p["trust"]]
        if pfc is not None and cur.pfc != pfc:
            self.changes["pfc"] = {"before": pfc_to_string(cur.pfc), "after": pfc_to_string(pfc)}
            args += ["--pfc", pfc_to_string(pfc)]
        if args and not self.check_mode:
            self.run([exe, "-i", iface, *args], writes=True)
            cur = self.qos_read(exe)
        if mapping:
            if cur.dscp2prio is None:
                # trust is pcp now (check mode, before the switch to dscp): the map cannot be read
                self.unverified.update({f"dscp2prio.{d}": v for d, v in sorted(mapping.items())})
            else:
                wrong = {d: v for d, v in sorted(mapping.items()) if cur.dscp2prio.get(d) != v}
                for d, v in wrong.items():
                    self.changes[f"dscp2prio.{d}"] = {"before": cur.dscp2prio.get(d), "after": v}
                    if not self.check_mode:
                        # one mapping per call: mlnx_qos takes several, but a failure then names none of them
                        self.run([exe, "-i", iface, "--dscp2prio", f"set,{d},{v}"], writes=True)
                if wrong and not self.check_mode:
                    cur = self.qos_read(exe)
        if not self.check_mode:
            bad = []
            if p["trust"] is not None and cur.trust != p["trust"]:
                bad.append(f"trust is {cur.trust}, wanted {p['trust']}")
            if pfc is not None and cur.pfc != pfc:
                bad.append(f"pfc is {pfc_to_string(cur.pfc)}, wanted {pfc_to_string(pfc)}")
            for d, v in sorted(mapping.items()):
                if cur.dscp2prio is None or cur.dscp2prio.get(d) != v:
                    got = None if cur.dscp2prio is None else cur.dscp2prio.get(d)
                    bad.append(f"dscp {d} maps to priority {got}, wanted {v}")
            if bad:
                self.fail(f"mlnx_qos on {iface} did not apply: {'; '.join(bad)}")
        self.state["mlnx_qos"] = cur.as_dict()

    # ---- RoCE ToS -----------------------------------------------------------------------------------------------

    def cma_read(self, exe: str) -> int:
        text = self.run([exe, "-d", self.p["hca"], "-p", str(self.p["port"])]).strip()
        try:
            return int(text.splitlines()[-1].strip())
        except (ValueError, IndexError):
            self.fail(f"cma_roce_tos -d {self.p['hca']} printed {text!r}, not a ToS value")
            raise

    def tos(self) -> None:
        p = self.p
        tos = p["roce_tos"]
        if tos is None:
            return
        hca = p["hca"]
        if p["roce_tos_cma"]:
            group = rdma_cm_dir(p["configfs_root"], hca)
            if not os.path.isdir(group):
                if not os.path.isdir(rdma_cm_dir(p["configfs_root"])):
                    self.fail(
                        f"{rdma_cm_dir(p['configfs_root'])} does not exist: is configfs mounted and rdma_cm loaded?"
                    )
                try:
                    os.mkdir(group)  # exposes the device's RDMA-CM settings; changes none of them
                except OSError as exc:
                    self.fail(f"cannot create {group}: {exc.strerror or exc}")
            exe = self.bin_path("cma_roce_tos")
            before = self.cma_read(exe)
            after = before
            if before != tos:
                self.changes["roce_tos.rdma_cm"] = {"before": before, "after": tos}
                if not self.check_mode:
                    self.run([exe, "-d", hca, "-p", str(p["port"]), "-t", str(tos)], writes=True)
                    after = self.cma_read(exe)
                    if after != tos:
                        self.fail(f"cma_roce_tos -d {hca} -t {tos} did not apply: the ToS is {after}")
            self.state["roce_tos.rdma_cm"] = after
        if p["roce_tos_traffic_class"]:
            path = traffic_class_path(p["sysfs_root"], hca, p["port"])
            before_tc = self.read_tclass(path)
            after_tc = before_tc
            if before_tc != tos:
                self.changes["roce_tos.traffic_class"] = {"before": before_tc, "after": tos}
                if not self.check_mode:
                    self.write(path, str(tos))
                    after_tc = self.read_tclass(path)
                    if after_tc != tos:
                        self.fail(f"{path}: wrote {tos}, reads back {after_tc}")
            self.state["roce_tos.traffic_class"] = after_tc

    def read_tclass(self, path: str) -> int | None:
        try:
            return parse_traffic_class(read_text(path))
        except RoceSysfsError as exc:
            self.fail(f"{exc} (tc/<port>/traffic_class comes with MLNX_OFED/DOCA-host mlx5_ib)")
            raise

    # ---- sysfs integers: ECN, CNP, MTU --------------------------------------------------------------------------

    def write(self, path: str, value: str) -> None:
        self.wrote = True
        try:
            write_text(path, value)
        except RoceSysfsError as exc:
            self.fail(str(exc))

    def sysfs_int(self, item: str, path: str, want: int) -> None:
        """Read ``path``; write ``want`` when different (not in check mode); read back."""
        try:
            before = read_int(path)
        except RoceSysfsError as exc:
            self.fail(str(exc))
            raise
        after = before
        if before != want:
            self.changes[item] = {"before": before, "after": want}
            if not self.check_mode:
                self.write(path, str(want))
                try:
                    after = read_int(path)
                except RoceSysfsError as exc:
                    self.fail(str(exc))
                    raise
                if after != want:
                    self.fail(f"{path}: wrote {want}, reads back {after}")
        self.state[item] = after

    def ecn(self) -> None:
        p = self.p
        for role in ("np", "rp"):
            if role not in self.ecn_wanted:
                continue
            wanted = self.ecn_wanted[role]
            for prio in range(8):
                if prio in wanted:
                    target = 1
                elif p["ecn_disable_others"]:
                    target = 0
                else:
                    continue
                path = ecn_enable_path(p["sysfs_root"], p["interface"], role, prio)
                self.sysfs_int(f"ecn.{role}.{prio}", path, target)

    def cnp(self) -> None:
        p = self.p
        if not p["cnp"]:
            return
        if p["cnp"].get("dscp") is not None:
            self.sysfs_int("cnp.dscp", cnp_path(p["sysfs_root"], p["interface"], "cnp_dscp"), int(p["cnp"]["dscp"]))
        if p["cnp"].get("priority") is not None:
            path = cnp_path(p["sysfs_root"], p["interface"], "cnp_802p_prio")
            self.sysfs_int("cnp.priority", path, int(p["cnp"]["priority"]))

    def mtu(self) -> None:
        if self.p["mtu"] is not None:
            self.sysfs_int("mtu", mtu_path(self.p["sysfs_root"], self.p["interface"]), self.p["mtu"])
