"""The facts every network telemetry reader returns: counters and gauges per port, one snapshot per reading.

Counter names are canonical across tools (:data:`COUNTERS`), so the rate, correlation and SLI layers never see a
tool's own spelling. Readers only report; rates, correlation and judgement live in the layers above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeGuard

# Canonical monotonic counters (packets, frames, events, microseconds). Per priority or queue: the ``{p}`` / ``{q}``
# forms with the number in place (``pfc3_rx``, ``q3_uc_drop``, ``fec_s2_codewords``). Lanes: ``{name}_lane{n}``.
COUNTERS: dict[str, str] = {
    "rx_ok": "frames received without error",
    "rx_err": "frames received with an error (FCS/CRC, symbol, length)",
    "rx_drop": "frames dropped on receive (buffer, policy)",
    "rx_ovr": "frames dropped on receive by overrun or oversize",
    "tx_ok": "frames sent",
    "tx_err": "frames not sent for an error",
    "tx_drop": "frames dropped on transmit",
    "tx_ovr": "frames dropped on transmit by overrun or oversize",
    "rx_octets": "octets received",
    "tx_octets": "octets sent",
    "rx_crc": "frames received with an FCS/CRC error",
    "rx_symbol_err": "symbol (PCS) errors received",
    "fec_corrected": "FEC codewords corrected",
    "fec_uncorrectable": "FEC codewords not correctable",
    "fec_symbol_err": "symbols corrected by FEC",
    "pfc{p}_rx": "PFC pause frames received for priority p",
    "pfc{p}_tx": "PFC pause frames sent for priority p",
    "pfc{p}_rx_duration_us": "time paused by received PFC on priority p, microseconds",
    "pfc{p}_tx_duration_us": "time the port asked its peer to pause priority p, microseconds",
    "pause_rx": "global (802.3x) pause frames received",
    "pause_tx": "global (802.3x) pause frames sent",
    "pfcwd{p}_storm_detected": "PFC watchdog storms detected on priority p",
    "pfcwd{p}_storm_restored": "PFC watchdog restorations on priority p",
    "q{q}_uc_pkts": "unicast packets through egress queue q",
    "q{q}_uc_drop": "unicast packets dropped at egress queue q",
    "q{q}_mc_pkts": "multicast packets through egress queue q",
    "q{q}_mc_drop": "multicast packets dropped at egress queue q",
    "ecn_marked": "packets marked congestion experienced (ECN CE)",
    "cnp_sent": "RoCE congestion notification packets sent (notification point)",
    "cnp_handled": "RoCE congestion notification packets handled (reaction point)",
    "out_of_sequence": "RoCE packets received out of sequence",
    "packet_seq_err": "RoCE NAKs for a sequence error",
    "local_ack_timeout_err": "RoCE local ACK timeouts",
    "rx_out_of_buffer": "packets dropped for no receive WQE (host out of buffer)",
    "rx_discards_phy": "packets dropped by the NIC's physical port (congestion)",
    "link_down_events": "times the link went down",
    "bgp_established": "BGP sessions with the peer that reached Established (FRR connectionsEstablished)",
    "bgp_dropped": "BGP sessions with the peer that dropped from Established: session flaps (FRR connectionsDropped)",
    "fec_s{s}_codewords": "FEC codewords received with s symbol errors (FEC histogram bin s)",
    "link_state_changes": "times the port's operational state changed, up or down (a flap counts twice)",
    "pause_rx_duration_us": "time paused by received global (802.3x) pause, microseconds",
    "pause_tx_duration_us": "time the port asked its peer to pause (global 802.3x pause), microseconds",
    "pfc{p}_rx_discards": "frames received on priority p dropped for lack of receive buffer",
    "tx_pause_storm_warning": "times the NIC kept sending pause past its stall warning watermark",
    "tx_pause_storm_error": "times the NIC's pause storm guard stopped it sending pause (drops may follow)",
    "rx_bits": "bits received at the physical layer (the denominator of a BER)",
    "fec_corrected_bits": "bits corrected by FEC",
    "phy_raw_errors": "bit errors seen before FEC correction (raw physical errors)",
    "phy_effective_errors": "errors left after FEC correction (effective physical errors)",
    "link_error_recovery": "times the link recovered from errors by retraining, without going down",
    "tx_wait": "ticks the port had data to send but no credit or was paused (InfiniBand PortXmitWait)",
    "cnp_ignored": "RoCE congestion notification packets received and ignored (reaction point)",
    "rnr_nak_retry_err": "RoCE receiver-not-ready NAKs received",
    "duplicate_request": "RoCE requests received again (the requester retransmitted)",
    "implied_nak_seq_err": "RoCE read or atomic responses that imply lost packets (implied NAK sequence error)",
    "req_cqe_err": "RoCE requester work completions with an error",
    "resp_cqe_err": "RoCE responder work completions with an error",
    "req_retries_exceeded": "RoCE requests that ran out of transport retries (the QP went to error)",
    "adp_retrans": "RoCE adaptive retransmissions",
    "adp_retrans_timeout": "RoCE adaptive retransmission timeouts",
    "icrc_err": "RoCE packets received with an ICRC error",
    "q{q}_all_pkts": "packets through egress queue q that serves unicast and multicast alike (SAI_QUEUE_TYPE_ALL)",
    "q{q}_all_drop": "packets dropped at egress queue q that serves unicast and multicast alike",
    "q{q}_ecn_marked": "packets marked congestion experienced (ECN CE) at egress queue q",
}

# Canonical gauges (point readings, never rated): transceiver DOM per lane with ``_lane{n}``.
GAUGES: dict[str, str] = {
    "rx_power_dbm": "optical receive power, dBm",
    "tx_power_dbm": "optical transmit power, dBm",
    "tx_bias_ma": "laser bias current, mA",
    "temperature_c": "module temperature, degrees Celsius",
    "voltage_v": "module supply voltage, volts",
    "pre_fec_ber": "bit error ratio before FEC",
    "post_fec_ber": "bit error ratio after FEC",
    "pre_fec_ber_max": "highest pre-FEC bit error ratio of any poll interval so far",
    "fec_flr": "frame loss ratio after FEC, observed",
    "fec_flr_predicted": "frame loss ratio after FEC, predicted from the FEC histogram",
    "fec_max_t": "most symbol errors seen in one FEC codeword so far (-1: none)",
}

_NUMBERED = re.compile(r"(pfc|pfcwd|q|fec_s)(\d+)_")
_NUMBERED_FORM = {"pfc": "pfc{p}_", "pfcwd": "pfcwd{p}_", "q": "q{q}_", "fec_s": "fec_s{s}_"}
_LANE = re.compile(r"_lane\d+$")


def canonical(name: str) -> bool:
    """Whether ``name`` is a canonical counter or gauge name (numbers of priority, queue and lane in place)."""
    base = _LANE.sub("", _NUMBERED.sub(lambda m: _NUMBERED_FORM[m[1]], name))
    return base in COUNTERS or base in GAUGES


# the state words of a port the judgement reads (a link end keeps only these): its operational and administrative
# state, and the PFC watchdog's status of each queue (``pfcwd{q}_status``)
END_STATE_WORDS = ("oper", "admin")


def judged_word(key: str) -> bool:
    """Whether a link end keeps the state word ``key`` (:data:`END_STATE_WORDS`, ``pfcwd{q}_status``)."""
    return key in END_STATE_WORDS or (key.startswith("pfcwd") and key.endswith("_status"))


def distinct[T](objects: Iterable[T]) -> Iterable[T]:
    """Each of ``objects`` once, by identity, in first-seen order: rows of a frame share their state dicts, so a
    check of every row's words runs over a few dicts (one C-level pass to find them)."""
    items = list(objects)
    return dict(zip(map(id, items), items, strict=True)).values()


def all_known[T](values: list[T | None]) -> TypeGuard[list[T]]:
    """Whether no item of ``values`` is None (one C-level pass), so that it is a ``list[T]``."""
    return None not in values


@dataclass(slots=True)
class PortSample:
    """One port in one reading: its counters and gauges by canonical name (``None``: printed but unreadable, such as
    ``N/A``), and its state words as printed (``oper``, ``admin``, ``speed``, ``fec``, ``mtu``...)."""

    port: str
    counters: dict[str, int | None] = field(default_factory=dict)
    gauges: dict[str, float | None] = field(default_factory=dict)
    state: dict[str, str] = field(default_factory=dict)


@dataclass
class Snapshot:
    """One reading of one tool on one device.

    Attributes:
        tool: the tool and view (``portstat -j``, ``show pfc counters``, ``ethtool -S``...).
        device: the switch or host the output names ("" when it does not; the caller knows).
        taken_at: seconds since the epoch when the output says when it was taken, else None (the caller's clock).
        version: the tool or NOS version when known.
        ports: by port name as the tool prints it.
        unknown: reasons something could not be read (each names the line, port or field).
    """

    tool: str
    device: str = ""
    taken_at: float | None = None
    version: str = ""
    ports: dict[str, PortSample] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    def port(self, name: str) -> PortSample:
        """The sample of ``name``, created empty on first use."""
        sample = self.ports.get(name)
        if sample is None:
            sample = self.ports[name] = PortSample(name)
        return sample

    @property
    def incomplete(self) -> bool:
        """Whether part of the output could not be read."""
        return bool(self.unknown)


__all__ = ["COUNTERS", "GAUGES", "PortSample", "Snapshot", "canonical"]
