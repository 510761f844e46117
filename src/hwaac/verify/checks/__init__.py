"""The check catalog, in the order it runs (by stage; see hwaac.verify.checks.base)."""

from __future__ import annotations

from hwaac.verify.checks.base import Check, Context
from hwaac.verify.checks.bgp_prefixes import VerifyBgpPrefixesReceived
from hwaac.verify.checks.bgp_sessions import VerifyBgpSessions
from hwaac.verify.checks.devices import VerifyDevicesAnswer
from hwaac.verify.checks.ecmp import VerifyEcmpRoutes
from hwaac.verify.checks.interface_mtu import VerifyInterfaceMtu
from hwaac.verify.checks.interface_state import VerifyInterfaceState
from hwaac.verify.checks.lldp import VerifyLldpNeighbors
from hwaac.verify.checks.loopbacks import VerifyLoopbacksReachable
from hwaac.verify.checks.path_mtu import VerifyPathMtu
from hwaac.verify.checks.rail_paths import VerifyRailPaths

CATALOG: tuple[type[Check], ...] = (
    VerifyDevicesAnswer,
    VerifyInterfaceState,
    VerifyLldpNeighbors,
    VerifyInterfaceMtu,
    VerifyBgpSessions,
    VerifyBgpPrefixesReceived,
    VerifyEcmpRoutes,
    VerifyLoopbacksReachable,
    VerifyRailPaths,
    VerifyPathMtu,
)
BY_NAME: dict[str, type[Check]] = {c.name: c for c in CATALOG}

__all__ = ["BY_NAME", "CATALOG", "Check", "Context"]
