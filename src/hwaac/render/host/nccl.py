"""NCCL environment of a GPU node: ``nccl.env``, ``KEY=value`` lines (comments start with ``#``).

The format is the one /etc/nccl.conf (NCCL_CONF_FILE) and systemd ``EnvironmentFile=`` both read: values are
written unquoted (NCCL's file parser keeps quotes as part of the value), so a value must not contain a newline.

- ``NCCL_IB_HCA``: the node's RDMA devices in NIC order with port 1, prefixed with ``=`` for exact matching
  (``=mlx5_0:1,mlx5_1:1,...``). NCCL matches HCA names by prefix otherwise, so ``mlx5_1`` would also select
  ``mlx5_10``..``mlx5_17`` (storage or front-end NICs on DGX-class hosts) [NCCL env docs, NCCL_IB_HCA and the
  ``=`` rule shared with NCCL_SOCKET_IFNAME].
- ``NCCL_IB_GID_INDEX``: host.nccl_gid_index (-1 lets NCCL pick the RoCEv2 GID itself, NCCL >= 2.21).
- ``NCCL_IB_TC``: the full ToS byte, the same as the NIC's RDMA-CM ToS (106 = DSCP 26 << 2 | ECT(0)), so NCCL's
  verbs traffic is marked like RDMA-CM traffic (NVIDIA/nccl src/transport/net_ib; domain note section 4).
- then ``host.nccl_env`` in intent order; a key there replaces the derived value in place. Names and values
  are not checked here: the intent rules (:mod:`hwaac.model.rules`) already refuse names that are not
  upper-case identifiers and values with line breaks.

A comment line above ``NCCL_IB_HCA`` explains the leading ``=``, which readers otherwise take for a typo.
"""

from __future__ import annotations

from hwaac.render.host._context import HostContext, Rail

PATH = "nccl.env"
HCA_NOTE = ("# NCCL_IB_HCA starts with '=' on purpose: exact device names, so mlx5_1 does not also select "
            "mlx5_10..mlx5_17.\n")


def nccl_vars(rails: list[Rail], ctx: HostContext) -> dict[str, str]:
    """The variables of ``nccl.env`` in file order (see module docstring)."""
    out = {
        "NCCL_IB_HCA": "=" + ",".join(f"{r.hca}:1" for r in rails),
        "NCCL_IB_GID_INDEX": str(ctx.gid_index),
        "NCCL_IB_TC": str(ctx.tos),
    }
    out.update(ctx.nccl_extra)
    return out


def render_nccl_env(node_name: str, rails: list[Rail], ctx: HostContext) -> str:
    """The text of ``nccl.env`` for one GPU node (``rails`` in NIC order)."""
    key = ("nccl", tuple(r.hca for r in rails))
    body = ctx.memo.get(key)
    if body is None:
        lines = []
        for k, v in nccl_vars(rails, ctx).items():
            if k == "NCCL_IB_HCA" and v.startswith("="):  # not above a host.nccl_env override without '='
                lines.append(HCA_NOTE)
            lines.append(f"{k}={v}\n")
        body = "".join(lines)
        ctx.memo[key] = body
    return f"# Rendered by hwaac for {node_name} (fabric {ctx.fabric}); do not edit, re-render from the intent.\n{body}"
