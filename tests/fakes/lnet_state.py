"""The state and the NI model of the fake ``bin/lnetctl``: its defaults, ``$HWAAC_FAKE_STATE/lnet.json`` read and
written, and the trees ``net show``/``export``/``global show`` print (see the fake's docstring for the layouts and
their sources in lustre-release). Standard library only; the fake imports this file by path, as the other fakes
import theirs."""

from __future__ import annotations

import json
import os
import re
import sys

DEFAULT_INTERFACES = {"ib0": "10.20.0.5", "ib1": "10.20.1.5"}
# 2.15 `lnetctl global show` keys in print order and default values (a recorded 2.15.3/2.15.4 install guide;
# fixtures README); 2.16 adds max_recovery_ping_interval
DEFAULT_GLOBAL = {
    "numa_range": 0,
    "max_interfaces": 200,
    "discovery": 1,
    "drop_asym_route": 0,
    "retry_count": 2,
    "transaction_timeout": 50,
    "health_sensitivity": 100,
    "recovery_interval": 1,
    "router_sensitivity": 100,
    "lnd_timeout": 16,
    "response_tracking": 3,
    "recovery_limit": 0,
}
GLOBAL_216 = {"max_recovery_ping_interval": 900}  # (fake) default
TUNABLE_DEFAULTS = {"peer_timeout": 180, "peer_credits": 8, "peer_buffer_credits": 0, "credits": 256}


# --- state --------------------------------------------------------------------------------------------------------


def state_dir() -> str:
    root = os.environ.get("HWAAC_FAKE_STATE")
    if not root:
        sys.stderr.write("HWAAC_FAKE_STATE is not set (fake)\n")
        sys.exit(2)
    os.makedirs(root, exist_ok=True)
    return root


def load() -> dict:
    path = os.path.join(state_dir(), "lnet.json")
    state: dict = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
        state.setdefault("loaded", True)
    else:
        state["loaded"] = False
    state.setdefault("configured", False)
    state.setdefault("dlc", state["configured"])
    state.setdefault("layout", "2.15")
    state.setdefault("version", "2.15.5" if state["layout"] == "2.15" else "2.16.1")
    state.setdefault("interfaces", dict(DEFAULT_INTERFACES))
    state.setdefault("cpt", "[0,1]")
    state.setdefault("nets", [])
    glob = dict(DEFAULT_GLOBAL)
    if state["layout"] != "2.15":
        glob.update(GLOBAL_216)
    glob.update(state.get("global", {}))
    state["global"] = glob
    state.setdefault("knobs", {})
    return state


def save(state: dict) -> None:
    path = os.path.join(state_dir(), "lnet.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=2)
    os.replace(tmp, path)


def lustre_mounted() -> bool:
    path = os.path.join(state_dir(), "proc_mounts")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as fh:
        return any(len(line.split()) > 2 and line.split()[2] == "lustre" for line in fh)


def norm_net(name: str) -> str | None:
    """libcfs_str2net + libcfs_net2str: ``o2ib0`` -> ``o2ib``; None for a name LNet cannot parse."""
    m = re.match(r"^(o2ib|tcp|gni|kfi|ptl|lo)(\d*)$", name or "")
    if not m:
        return None
    num = m.group(2)
    return m.group(1) if num.strip("0") == "" else m.group(1) + str(int(num))


# --- model --------------------------------------------------------------------------------------------------------


def find_net(state: dict, name: str) -> dict | None:
    return next((n for n in state["nets"] if n["net"] == name), None)


def lnd_type(net: str) -> str:
    """The LND of a network: ``o2ib1`` -> ``o2ib``."""
    return re.sub(r"\d+$", "", net)


# health stats keys in print order, 2.15+ (liblnetconfig.c lustre_lnet_show_net(); 2.16+ lnet/lnet/api-ni.c
# local_ni_health_stats_list); values of a healthy NI
HEALTH_STATS = {
    "fatal_error": 0,
    "health value": 1000,
    "interrupts": 0,
    "dropped": 0,
    "aborted": 0,
    "no route": 0,
    "timeouts": 0,
    "error": 0,
    "ping_count": 0,
    "next_ping": 0,
}


def parse_long(text: str) -> int | None:
    """lnetctl.c parse_long(): strtol(text, &end, 0) that must read the whole text; None when it does not."""
    m = re.fullmatch(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if not m:
        return None
    value = int(m.group(2), 0) if not re.fullmatch(r"0[0-7]+", m.group(2)) else int(m.group(2), 8)
    return -value if m.group(1) == "-" else value


def show_detail(args: list[str]) -> tuple[int, list[str]]:
    """The detail level of ``net show`` as jt_show_net() reads ``-v``/``--verbose`` (optional_argument, but
    ``-v`` takes no optarg in "n:v"): ``--verbose=N`` has an optarg and counts as 1; otherwise the next argument is
    taken unless it starts with ``-``, and is the level when parse_long() reads it, else 1. Returns the level and
    the other arguments."""
    detail, rest, i = 0, [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-v", "--verbose"):
            detail = 1
            if i + 1 < len(args) and not args[i + 1].startswith("-"):
                i += 1
                level = parse_long(args[i])
                detail = 1 if level is None else level
        elif arg.startswith("--verbose="):
            detail = 1
        else:
            rest.append(arg)
        i += 1
    return detail, rest


def ni_tree(state: dict, net: str, ni: dict, detail: int, backup: bool, layout: str) -> dict:
    """One NI as lustre_lnet_show_net builds it (export --backup leaves out nid, status, stats, dev cpt)."""
    tree: dict = {}
    if not backup:
        tree["nid"] = ni["nid"]
        tree["status"] = ni.get("status", "up")
    if ni.get("interface"):
        tree["interfaces"] = {"0": ni["interface"]}
    cpt = ni.get("CPT", state["cpt"])
    if detail:
        if not backup:
            tree["statistics"] = {"send_count": 0, "recv_count": 0, "drop_count": 0}
            if detail >= 2:
                for name in ("sent_stats", "received_stats", "dropped_stats"):
                    tree[name] = {"put": 0, "get": 0, "reply": 0, "ack": 0, "hello": 0}
                health = {**HEALTH_STATS, "health value": 1000 if net != "lo" else 0}
                tree["health stats"] = {k: ni.get("health", {}).get(k, v) for k, v in health.items()}
        tree["tunables"] = dict(ni.get("tunables", {}))
        if ni.get("lnd_tunables"):
            tree["lnd tunables"] = dict(ni["lnd_tunables"])
        if not backup:
            tree["dev cpt"] = 0 if net == "lo" else -1
        tree["CPT"] = f'"{cpt}"' if layout == "2.15" else cpt
    return tree


def nets_tree(state: dict, only: str | None, detail: int, backup: bool, layout: str) -> dict | None:
    nets = []
    if not backup and (only is None or only == "lo"):
        lo = {"nid": "0@lo", "status": "up", "tunables": {k: 0 for k in TUNABLE_DEFAULTS}}
        nets.append({"net type": "lo", "local NI(s)": [ni_tree(state, "lo", lo, detail, False, layout)]})
    for net in state["nets"]:
        if only is not None and net["net"] != only:
            continue
        nets.append(
            {
                "net type": net["net"],
                "local NI(s)": [ni_tree(state, net["net"], ni, detail, backup, layout) for ni in net["nis"]],
            }
        )
    return {"net": nets} if nets else None


def global_tree(state: dict) -> dict:
    return {"global": dict(state["global"])}
