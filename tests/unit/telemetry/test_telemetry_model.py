"""The canonical counter and gauge names the telemetry readers share."""

from __future__ import annotations

import pytest

from hwaac.telemetry.model import Snapshot, canonical


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("rx_err", True),
        ("pfc3_rx", True),
        ("pfc0_tx_duration_us", True),
        ("pfcwd4_storm_detected", True),
        ("q7_uc_drop", True),
        ("rx_power_dbm_lane2", True),
        ("fec_corrected", True),
        ("pre_fec_ber", True),
        ("bgp_established", True),
        ("bgp_dropped", True),
        ("connectionsDropped", False),
        ("fec_s15_codewords", True),
        ("link_state_changes", True),
        ("pre_fec_ber_max", True),
        ("fec_flr", True),
        ("fec_flr_predicted", True),
        ("fec_max_t", True),
        ("pfc3_rx_discards", True),
        ("pause_rx_duration_us", True),
        ("phy_raw_errors_lane3", True),
        ("phy_effective_errors", True),
        ("pre_fec_ber_lane1", True),
        ("link_error_recovery", True),
        ("cnp_ignored", True),
        ("req_retries_exceeded", True),
        ("icrc_err", True),
        ("rx_prio3_pause", False),
        ("np_cnp_sent", False),
        ("q20_all_pkts", True),
        ("q3_all_drop", True),
        ("q3_ecn_marked", True),
        ("q_all_drop", False),
        ("pfc_rx", False),
        ("q_uc_drop", False),
        ("rx_errors", False),
        ("RX_ERR", False),
        ("rx_err_lane", False),
        ("fec_s_codewords", False),
        ("fec_codewords", False),
    ],
)
def test_canonical_names(name: str, known: bool) -> None:
    assert canonical(name) is known


def test_a_snapshot_creates_a_port_once() -> None:
    snap = Snapshot("portstat -j")
    snap.port("Ethernet0").counters["rx_ok"] = 5
    snap.port("Ethernet0").counters["tx_ok"] = 6
    assert list(snap.ports) == ["Ethernet0"] and snap.ports["Ethernet0"].counters == {"rx_ok": 5, "tx_ok": 6}
    assert not snap.incomplete
