# Copyright: hwaac maintainers
# Apache-2.0
"""What the ``aiinfra.hwaac.lnet`` module gives ``lnetctl``: the command of each operation that ``lnet_plan``
plans, the ``lnetctl import`` documents and ``/etc/lnet.conf``, in lnetctl's own cYAML layout. Host side:
standard library only; the layouts and their sources are described in ``lnet.py``.
"""

from __future__ import annotations

import re

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet import TUNABLES, LnetError

# the only LND tunable ``lnetctl net add`` takes on the command line (2.15 jt_add_ni ``--conns-per-peer``);
# the others go through ``lnetctl import``
LND_ON_COMMAND_LINE = ("conns_per_peer",)


# --- commands ----------------------------------------------------------------------------------------------------


def op_command(op: dict, lnetctl: str = "lnetctl") -> tuple[list[str], str | None, str]:
    """``(argv, stdin, display)`` for one plan op.

    ``add`` is ``lnetctl net add --net N --if a,b [--peer-timeout ... --conns-per-peer N]`` when every declared
    LND tunable is one the command line takes; otherwise ``lnetctl import`` with the NIs in lnetctl's own
    export layout on stdin (``net add`` has no flag for o2ib's ``concurrent_sends`` or ``map_on_demand``;
    ``import`` reads them: liblnetconfig_lnd.c ``yaml_extract_o2ib_tun``). ``display`` is the shell form.
    Raises :class:`LnetError` for an op that ``lnet_plan.plan_changes`` does not make.
    """
    if op["op"] == "del_net":
        argv = [lnetctl, "net", "del", "--net", op["net"]]
        return argv, None, _shell(argv)
    if op["op"] == "del_ni":
        argv = [lnetctl, "net", "del", "--net", op["net"], "--if", op["interface"]]
        return argv, None, _shell(argv)
    if op["op"] == "set":
        argv = [lnetctl, "set", op["key"], str(op["value"])]
        return argv, None, _shell(argv)
    if op["op"] == "add":
        if all(k in LND_ON_COMMAND_LINE for k in op["lnd_tunables"]):
            argv = [lnetctl, "net", "add", "--net", op["net"], "--if", ",".join(op["interfaces"])]
            for key, value in {**op["tunables"], **op["lnd_tunables"]}.items():
                argv += [net_add_flag(key), str(value)]
            return argv, None, _shell(argv)
        doc = render_import(op["net"], op["interfaces"], op["tunables"], op["lnd_tunables"])
        argv = [lnetctl, "import"]
        return argv, doc, f"{_shell(argv)} <<'EOF'\n{doc}EOF"
    raise LnetError(f"unknown op {op!r}")


def net_add_flag(tunable: str) -> str:
    """The ``lnetctl net add`` option of a tunable, its name with dashes (2.15 lnetctl.c jt_add_ni's long options:
    ``peer_timeout`` -> ``--peer-timeout``, likewise peer_credits, peer_buffer_credits, credits, conns_per_peer)."""
    return "--" + tunable.replace("_", "-")


def _shell(argv: list[str]) -> str:
    return " ".join(a if re.match(r"^[A-Za-z0-9_./:,@=+-]+$", a) else "'" + a.replace("'", "'\\''") + "'" for a in argv)


# --- cYAML layout ------------------------------------------------------------------------------------------------

_INDENT = 4
_EXTRA_IND = 2


def cyaml_dump(tree: dict) -> str:
    """``tree`` printed as lnetctl <= 2.15 prints (lustre-release ``lnet/utils/lnetconfig/cyaml.c``
    ``print_value``/``print_object``/``print_array``/``print_simple``, ``INDENT`` 4, ``EXTRA_IND`` 2): a dict is
    an object, a list a sequence of objects, other values are printed as they are (no quoting: lnetctl quotes
    inside the text, so give strings that are plain YAML). This is the layout the 2.15 ``lnetctl import`` parser
    reads (LU-17479: it does not read PyYAML's layout)."""
    lines: list[str] = []
    _cy(None, tree, 0, False, 0, lines)
    return "".join(line + "\n" for line in lines)


def _cy(key: str | None, value: object, level: int, first: bool, extra: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if key is not None:
            ind = _INDENT * level if first else _INDENT * level + extra
            out.append(" " * ind + ("- " if first else "") + f"{key}:")
        child_level = level + 1 if key is not None else level
        child_first = first if key is None else False
        child_extra = _EXTRA_IND if first else extra
        for k, v in value.items():
            _cy(str(k), v, child_level, child_first, child_extra, out)
            child_first = False
    elif isinstance(value, list):
        if key is not None:
            out.append(" " * (_INDENT * level + extra) + f"{key}:")
        child_level = level + 1 if key is not None else level
        for item in value:
            _cy(None, item, child_level, True, _EXTRA_IND, out)
    else:
        prefix = " " * (_INDENT * level) + "- " if first else ""
        ind = 0 if first else _INDENT * level + extra
        out.append(prefix + " " * ind + f"{key}: {value}")


def _ni_block(interface: str, tunables: dict, lnd: dict) -> dict:
    block: dict = {"interfaces": {"0": interface}}
    if tunables:
        block["tunables"] = {k: tunables[k] for k in TUNABLES if k in tunables}
    if lnd:
        block["lnd tunables"] = dict(lnd)
    return block


def render_import(net: str, interfaces: list[str], tunables: dict, lnd: dict) -> str:
    """The ``lnetctl import`` document that adds ``interfaces`` to ``net`` with the given tunables."""
    return cyaml_dump({"net": [{"net type": net, "local NI(s)": [_ni_block(i, tunables, lnd) for i in interfaces]}]})


LNET_CONF_HEADER = (
    "# Managed by hwaac (aiinfra.hwaac.lnet): lnetctl export --backup layout, read at boot by\n"
    "# lnet.service (lnetctl import /etc/lnet.conf). Local edits are overwritten.\n"
)


def render_lnet_conf(desired: dict) -> str:
    """``/etc/lnet.conf`` for the desired state: only the declared networks (each NI with the declared
    tunables) and global settings, in lnetctl's own <= 2.15 export layout (:func:`cyaml_dump`), so the boot-time
    ``lnetctl import`` of 2.15 reads it too (LU-17479). Deterministic: same input, same bytes."""
    tree: dict = {}
    if desired["nets"]:
        tree["net"] = [
            {
                "net type": n["net"],
                "local NI(s)": [_ni_block(i, n["tunables"], n["lnd_tunables"]) for i in n["interfaces"]],
            }
            for n in desired["nets"]
        ]
    if desired["global"]:
        tree["global"] = dict(desired["global"])
    return LNET_CONF_HEADER + cyaml_dump(tree)
