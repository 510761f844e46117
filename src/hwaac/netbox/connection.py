"""Which NetBox to talk to: ``NETBOX_URL`` and ``NETBOX_TOKEN`` from the environment (an existing NetBox), else
the local NetBox of this machine when it is up (``hwaac netbox up``). The token is never printed or logged."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hwaac.netbox.errors import NetBoxError


@dataclass(frozen=True)
class Target:
    """A NetBox endpoint: base URL (no trailing slash) and API token (hidden from repr)."""

    url: str
    token: str = field(repr=False)


def netbox_target(url: str | None = None, token: str | None = None) -> Target:
    """The NetBox to use: ``url`` or ``NETBOX_URL`` with ``token`` or ``NETBOX_TOKEN``; without a URL, the local
    NetBox.

    Raises:
        NetBoxError: a URL without a token, or no URL and the local NetBox is not up (one line, no token).
    """
    url = url or os.environ.get("NETBOX_URL")
    token = token or os.environ.get("NETBOX_TOKEN")
    if url:
        if not token:
            raise NetBoxError(f"NETBOX_TOKEN is not set for the NetBox at {url}; export it (it is never printed)")
        return Target(url.rstrip("/"), token)
    from hwaac.devnetbox.local import LocalNetBox

    local = LocalNetBox(log=lambda _msg: None)
    if not local.status().up:
        raise NetBoxError("no NetBox: set NETBOX_URL and NETBOX_TOKEN, or start the local one with `hwaac netbox up`")
    return Target(local.url, local.token)


def connect(url: str | None = None, token: str | None = None):
    """A :class:`hwaac.netbox.sync.client.Client` for :func:`netbox_target`, its URL, token and version checked.

    Raises:
        NetBoxError: no NetBox, a URL without a token, the token refused, an unsupported version (one line).
    """
    from hwaac.netbox.sync.client import Client

    target = netbox_target(url, token)
    client = Client(target.url, target.token)
    client.probe()
    return client
