"""NCCL environment of a GPU node: ``nccl.env``, ``KEY=value`` lines (comments start with ``#``).

``NCCL_IB_HCA`` (exact match with a leading ``=``), ``NCCL_IB_GID_INDEX``, ``NCCL_IB_TC`` (the RDMA-CM ToS byte),
then ``host.nccl_env`` in intent order, unquoted as /etc/nccl.conf and systemd ``EnvironmentFile=`` read them.
Why each value: docs/render-host.md.
"""

from __future__ import annotations

from hwaac.render.host._context import HostContext, Rail

PATH = "nccl.env"
HCA_NOTE = (
    "# NCCL_IB_HCA starts with '=' on purpose: exact device names, so mlx5_1 does not also select mlx5_10..mlx5_17.\n"
)


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
