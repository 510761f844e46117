"""The recorded lnetctl samples (tests/fixtures/tools/lnetctl, sources in its README) and the models written out by
hand from them, shared by test_lnet_parser.py and test_lnet_plan.py."""

from __future__ import annotations

from pathlib import Path

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "tools" / "lnetctl"

O2IB_TUN = {"peer_timeout": 180, "peer_credits": 32, "peer_buffer_credits": 0, "credits": 256}
O2IB_LND = {
    "peercredits_hiw": 16,
    "map_on_demand": 0,
    "concurrent_sends": 64,
    "fmr_pool_size": 512,
    "fmr_flush_trigger": 384,
    "fmr_cache": 1,
    "ntx": 512,
    "conns_per_peer": 1,
}
GLOBAL_215 = {
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


def text(name: str) -> str:
    return (FIX / name).read_text()


def ni(interface, nid=None, status=None, tunables=None, lnd=None):
    return {"interface": interface, "nid": nid, "status": status, "tunables": tunables or {}, "lnd_tunables": lnd or {}}


def current(*nets, glob=None) -> dict:
    """nets: (name, [(interface, peer_credits), ...])"""
    return {
        "nets": [
            {
                "net": name,
                "nis": [
                    ni(i, f"10.20.{k}.5@{name}", "up", {**O2IB_TUN, "peer_credits": pc}, {"conns_per_peer": 1})
                    for k, (i, pc) in enumerate(nis)
                ],
            }
            for name, nis in nets
        ],
        "global": glob if glob is not None else dict(GLOBAL_215),
    }
