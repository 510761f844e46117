#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.roce_qos: runtime RoCE QoS of ConnectX ports (one, or a list), idempotent."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Trust state, PFC, DSCP mapping, RoCE ToS, ECN, CNP marking and MTU of ConnectX ports
description:
  - Brings the runtime (non-persistent) RoCE settings of a netdev and its RDMA device to the desired values,
    each read before it is set and read again after; a value that is already right is left alone.
  - Trust state and PFC with C(mlnx_qos -i IF --trust dscp --pfc 0,0,0,1,0,0,0,0), the DSCP to priority map with
    C(mlnx_qos -i IF --dscp2prio set,DSCP,PRIO) (one call per differing entry; mlnx_qos refuses C(--trust) and
    C(--dscp2prio) together).
  - The RDMA-CM default ToS with C(cma_roce_tos -d HCA -t TOS) after creating the configfs group
    C(/sys/kernel/config/rdma_cm/HCA) when it is missing, and the raw-verbs ToS through
    C(/sys/class/infiniband/HCA/tc/1/traffic_class).
  - ECN per priority through C(/sys/class/net/IF/ecn/roce_np/enable/P) and C(roce_rp/enable/P), CNP marking
    through C(ecn/roce_np/cnp_dscp) and C(cnp_802p_prio), and the netdev MTU through C(/sys/class/net/IF/mtu).
  - The options follow one port entry of the C(nic-roce.json) file that hwaac renders per host, so a role can pass
    a port's fields straight through (all but the entry's C(port), which is the NIC ordinal, not the RDMA port
    number of O(port)).
  - Several ports are handled in one invocation with O(ports) (one task and one module start for all ports of a
    host instead of one per port). The desired values of every port are checked before anything runs; then each
    port is brought to its values as above, one after the other, and its result is returned in RV(ports). Every
    port is processed even when one fails; the task then fails with a message naming every failed port, and
    RV(ports) still holds the result of each port, failed or not.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  interface:
    description:
      - The netdev (for example C(rail0)).
      - One of O(interface) and O(ports) is required. O(ports) is mutually exclusive with every option of one port
        (O(interface) to O(mtu) in this list); O(sysfs_root) and O(configfs_root) apply to both forms.
    type: str
  hca:
    description: The RDMA device of the netdev (for example C(mlx5_0)); needed for O(roce_tos).
    type: str
  trust:
    description: Priority trust state for C(mlnx_qos --trust).
    type: str
    choices: [pcp, dscp]
  pfc:
    description: PFC enable per priority 0..7, as C(0,0,0,1,0,0,0,0) or a list of 8 ints.
    type: raw
  dscp2prio:
    description:
      - DSCP to priority entries that must hold, for example DSCP 26 to priority 3 and 48 to 6; other DSCPs are
        left as they are. Needs trust C(dscp) (mlnx_qos shows the map only in that state).
    type: dict
  roce_tos:
    description: The ToS byte for RoCE traffic (C(106) = DSCP 26 << 2 | ECT(0)), 0..255.
    type: int
  roce_tos_cma:
    description: Set O(roce_tos) as the RDMA-CM default with C(cma_roce_tos).
    type: bool
    default: true
  roce_tos_traffic_class:
    description: Set O(roce_tos) as the global C(tc/PORT/traffic_class) of the RDMA device (raw verbs, MLNX_OFED).
    type: bool
    default: true
  port:
    description: The RDMA port number for C(cma_roce_tos -p) and C(tc/PORT/traffic_class).
    type: int
    default: 1
  ecn:
    description:
      - ECN enable per priority, with the keys C(np_priorities) and C(rp_priorities), lists of priorities
        (notification point, reaction point). Listed priorities are enabled; others are left alone unless
        O(ecn_disable_others).
    type: dict
  ecn_disable_others:
    description: Also disable ECN on the priorities not listed in O(ecn).
    type: bool
    default: false
  cnp:
    description:
      - CNP marking, with the keys C(dscp) and C(priority), written to C(ecn/roce_np/cnp_dscp) and
        C(cnp_802p_prio).
    type: dict
  mtu:
    description: The netdev MTU in bytes.
    type: int
  ports:
    description:
      - Several ports in one invocation, each entry with the options of one port. Mutually exclusive with those
        options at the top level.
      - An interface may be listed only once.
    type: list
    elements: dict
    suboptions:
      interface:
        description: The netdev, as O(interface).
        type: str
        required: true
      hca:
        description: The RDMA device of the netdev, as O(hca).
        type: str
      trust:
        description: Priority trust state, as O(trust).
        type: str
        choices: [pcp, dscp]
      pfc:
        description: PFC enable per priority, as O(pfc).
        type: raw
      dscp2prio:
        description: DSCP to priority entries that must hold, as O(dscp2prio).
        type: dict
      roce_tos:
        description: The ToS byte for RoCE traffic, as O(roce_tos).
        type: int
      roce_tos_cma:
        description: Set the ToS as the RDMA-CM default, as O(roce_tos_cma).
        type: bool
        default: true
      roce_tos_traffic_class:
        description: Set the ToS as the global C(tc/PORT/traffic_class), as O(roce_tos_traffic_class).
        type: bool
        default: true
      port:
        description: The RDMA port number, as O(port) (not the C(port) ordinal of a C(nic-roce.json) entry).
        type: int
        default: 1
      ecn:
        description: ECN enable per priority, as O(ecn).
        type: dict
      ecn_disable_others:
        description: Also disable ECN on the priorities not listed, as O(ecn_disable_others).
        type: bool
        default: false
      cnp:
        description: CNP marking, as O(cnp).
        type: dict
      mtu:
        description: The netdev MTU in bytes, as O(mtu).
        type: int
  sysfs_root:
    description: Where sysfs is mounted (tests point it at a directory tree).
    type: str
    default: /sys
  configfs_root:
    description: Where configfs is mounted.
    type: str
    default: /sys/kernel/config
notes:
  - These settings do not survive a reboot; run the module at every boot (the role C(aiinfra.hwaac.nic_config) does).
  - In check mode nothing is written, but the missing configfs group is still created, because without it the
    RDMA-CM ToS cannot be read at all; creating the group changes no setting.
  - In check mode with trust C(pcp), the DSCP map cannot be read; its entries are listed in RV(unverified) and not
    predicted as changes.
  - Diff mode shows the changed items (with O(ports), per interface and item).
  - Needs C(mlnx_qos) and C(cma_roce_tos) (MLNX_OFED or DOCA-host) and root privileges.
seealso:
  - module: aiinfra.hwaac.mlxconfig
extends_documentation_fragment:
  - aiinfra.hwaac.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Lossless RoCE on rail0
  aiinfra.hwaac.roce_qos:
    interface: rail0
    hca: mlx5_0
    trust: dscp
    pfc: 0,0,0,1,0,0,0,0
    dscp2prio: {"26": 3, "48": 6}
    roce_tos: 106
    ecn: {np_priorities: [3], rp_priorities: [3]}
    cnp: {dscp: 48, priority: 6}
    mtu: 9000

- name: Every port of the rendered nic-roce.json
  aiinfra.hwaac.roce_qos:
    interface: "{{ item.interface }}"
    hca: "{{ item.hca }}"
    trust: "{{ item.trust }}"
    pfc: "{{ item.pfc }}"
    dscp2prio: "{{ item.dscp2prio }}"
    roce_tos: "{{ item.roce_tos }}"
    ecn: "{{ item.ecn }}"
    cnp: "{{ item.cnp }}"
    mtu: "{{ item.mtu }}"
  loop: "{{ (lookup('ansible.builtin.file', 'nic-roce.json') | from_json).ports }}"

- name: Every port of the rendered nic-roce.json in one invocation (the entries' own keys, without 'port')
  aiinfra.hwaac.roce_qos:
    ports: >-
      {{ (lookup('ansible.builtin.file', 'nic-roce.json') | from_json).ports
         | map('dict2items')
         | map('selectattr', 'key', 'in', ['interface', 'hca', 'trust', 'pfc', 'dscp2prio', 'roce_tos', 'ecn',
                                            'cnp', 'mtu'])
         | map('list') | map('items2dict') | list }}
  register: qos

- name: Ports whose DSCP map could not be checked in check mode
  ansible.builtin.debug:
    msg: "{{ qos.unverified | list }}"
"""

RETURN = r"""
changes:
  description: What this run changed (or, in check mode, would change), C(item -> {before, after}).
  returned: when O(interface) is given (on failure too, with the differences found up to the failure)
  type: dict
  sample: {"trust": {"before": "pcp", "after": "dscp"}, "ecn.np.3": {"before": 0, "after": 1}}
unverified:
  description:
    - Desired values that could not be read in check mode (C(item -> desired)).
    - With O(ports), C(interface -> {item -> desired}) for the ports that have any.
  returned: always
  type: dict
state:
  description: The managed values as read at the end, C(item -> value).
  returned: when O(interface) is given
  type: dict
mlnx_qos:
  description: The mlnx_qos status as parsed at the end (trust, pfc, dscp2prio, dcbx, cable_len).
  returned: when O(interface) is given and trust, pfc or dscp2prio is managed
  type: dict
raw:
  description: The outputs of the commands run, in order.
  returned: when O(interface) is given
  type: list
  elements: str
ports:
  description:
    - One result per entry of O(ports), in the same order.
    - A port that failed has RV(ports[].failed) true and RV(ports[].msg); its RV(ports[].changes) holds the
      differences found up to the failure, and RV(ports[].changed) tells whether anything was written to it.
  returned: when O(ports) is given
  type: list
  elements: dict
  contains:
    interface:
      description: The netdev, as given.
      type: str
      sample: rail0
    changed:
      description: Whether this port was changed (in check mode, would be).
      type: bool
    changes:
      description: As RV(changes), for this port.
      type: dict
    unverified:
      description: As RV(unverified), for this port.
      type: dict
    state:
      description: As RV(state), for this port (not for a failed port).
      type: dict
    mlnx_qos:
      description: As RV(mlnx_qos), for this port (not for a failed port).
      type: dict
    raw:
      description: As RV(raw), for this port.
      type: list
      elements: str
    failed:
      description: True when this port failed.
      type: bool
    msg:
      description: Why this port failed.
      type: str
  sample:
    - {"interface": "rail0", "changed": true, "changes": {"mtu": {"before": 1500, "after": 9000}},
       "unverified": {}, "state": {"mtu": 9000}, "raw": []}
failed_ports:
  description: The interfaces that failed, in the order of O(ports); the task failed.
  returned: on failure, when O(ports) is given and any port failed
  type: list
  elements: str
  sample: ["rail3"]
"""

import copy
import os
import shlex

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlnx_qos import (
    MlnxQosError,
    QosState,
    parse_dscp2prio,
    parse_mlnx_qos,
    parse_pfc,
    pfc_to_string,
)
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


class PortFailure(Exception):
    """One port could not be brought to the desired values."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


class Port:
    """One port's run: commands, their outputs and the changes found. Errors raise :class:`PortFailure`.

    ``p`` holds the port's options (:data:`PORT_OPTIONS`) and ``sysfs_root`` / ``configfs_root``.
    """

    def __init__(self, module: AnsibleModule, p: dict) -> None:
        self.module = module
        self.p = p
        self.check = module.check_mode
        self.raw: list[str] = []
        self.changes: dict[str, dict[str, object]] = {}
        self.unverified: dict[str, object] = {}
        self.state: dict[str, object] = {}
        self.wrote = False  # a setting was written (a set command ran or a file was written)
        self.pfc: list[int] | None = None
        self.mapping: dict[int, int] = {}
        self.ecn_wanted: dict[str, set[int]] = {}

    def fail(self, msg: str) -> None:
        raise PortFailure(msg)

    def validate(self) -> None:
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
        rc, out, err = self.module.run_command(cmd)
        text = out + (("\n" + err) if err.strip() else "")
        self.raw.append(f"$ {' '.join(shlex.quote(c) for c in cmd)}\n{text}")
        self.wrote = self.wrote or writes
        if rc != 0:
            self.fail(f"{' '.join(cmd)} failed (rc={rc}): {text.strip()}")
        return text

    def configure(self) -> dict:
        """Validate, then bring the port to the desired values; returns its result."""
        self.validate()
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

    def failure(self, exc: PortFailure) -> dict:
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
        if args and not self.check:
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
                    if not self.check:
                        # one mapping per call: mlnx_qos takes several, but a failure then names none of them
                        self.run([exe, "-i", iface, "--dscp2prio", f"set,{d},{v}"], writes=True)
                if wrong and not self.check:
                    cur = self.qos_read(exe)
        if not self.check:
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
                if not self.check:
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
                if not self.check:
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
            if not self.check:
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


def main() -> None:
    single_options = {k: (dict(v, required=False) if k == "interface" else v) for k, v in PORT_OPTIONS.items()}
    module = AnsibleModule(
        argument_spec={
            **single_options,
            "ports": {"type": "list", "elements": "dict", "options": copy.deepcopy(PORT_OPTIONS)},
            "sysfs_root": {"type": "str", "default": "/sys"},
            "configfs_root": {"type": "str", "default": "/sys/kernel/config"},
        },
        mutually_exclusive=[["ports", name] for name in PORT_OPTIONS],
        required_one_of=[["interface", "ports"]],
        supports_check_mode=True,
    )
    p = module.params
    roots = {"sysfs_root": p["sysfs_root"], "configfs_root": p["configfs_root"]}

    if p["ports"] is None:
        port = Port(module, {**{k: p[k] for k in PORT_OPTIONS}, **roots})
        try:
            result = port.configure()
        except PortFailure as exc:
            module.fail_json(msg=exc.msg, raw=port.raw, changes=port.changes)
        result.pop("interface")
        result["diff"] = port.diff()
        module.exit_json(**result)

    # list form: every port is checked before anything runs; then each is processed, and the task fails at the end
    # naming each port that failed
    ports = [Port(module, {**entry, **roots}) for entry in p["ports"]]
    seen: set[str] = set()
    for port in ports:
        iface = port.p["interface"]
        if iface in seen:
            module.fail_json(msg=f"interface {iface} is listed more than once in ports")
        seen.add(iface)
        try:
            port.validate()
        except PortFailure as exc:
            module.fail_json(msg=f"{iface}: {exc.msg}")
    results: list[dict] = []
    for port in ports:
        try:
            results.append(port.configure())
        except PortFailure as exc:
            results.append(port.failure(exc))
    summary = {
        "changed": any(r["changed"] for r in results),
        "unverified": {r["interface"]: r["unverified"] for r in results if r["unverified"]},
        "diff": {
            "before": {port.p["interface"]: port.diff()["before"] for port in ports if port.changes},
            "after": {port.p["interface"]: port.diff()["after"] for port in ports if port.changes},
        },
    }
    failed = [r for r in results if r.get("failed")]
    if failed:
        module.fail_json(
            msg=f"roce_qos failed on {len(failed)} of {len(results)} ports: "
            + "; ".join(f"{r['interface']}: {r['msg']}" for r in failed),
            failed_ports=[r["interface"] for r in failed],
            ports=results,
            **summary,
        )
    module.exit_json(ports=results, **summary)


if __name__ == "__main__":
    main()
