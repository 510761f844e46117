"""Frame readers against their parsers on hand-made outputs of the host formats (ethtool -S, ib-counters), one
edge a case, as test_frame_readers_cases.py has them for the switch formats: each checks what
test_frame_readers.check checks; "usual" False marks a plain output the frame reader leaves to its parser."""

from __future__ import annotations

import pytest

from hwaac.health.parsers.ib_counters import DATA_COUNTERS_32_OR_64, LEGACY_COUNTER_BITS
from hwaac.telemetry.frames import frame_of
from hwaac.telemetry.parsers import host_ethtool
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool
from tests.unit.telemetry.frame_case_tables import case_raw
from tests.unit.telemetry.test_frame_readers import check

# --- ethtool -S -------------------------------------------------------------------------------------------------------

ETHTOOL = (
    "NIC statistics:\n     rx_packets_phy: 10\n     tx_packets_phy: 20\n     rx_vport_unicast_packets: 30\n"
    "     rx_crc_errors_phy: 0\n     rx_prio3_pause: 4\n     rx_err_lane_2_phy: 1\n"
)


def _eth(old: str, new: str, text: str = ETHTOOL) -> str:
    assert old in text
    return text.replace(old, new)


ETHTOOL_CASES: list[tuple[str, str, bool]] = [
    ("as ethtool prints it", ETHTOOL, True),
    ("every counter read", _eth("     rx_vport_unicast_packets: 30\n", ""), True),
    ("no header", _eth("NIC statistics:\n", ""), True),
    ("no indentation", ETHTOOL.replace("     ", ""), True),
    ("tabs", ETHTOOL.replace("     ", "\t"), True),
    ("other whitespace", ETHTOOL.replace("     ", "\x0b\x1c"), True),
    ("no last newline", ETHTOOL[:-1], True),
    ("the rank 1 name first", _eth("rx_packets_phy: 10\n", "rx_global_pause: 3\n     rx_pause_ctrl_phy: 4\n"), True),
    ("a counter not read past 64 bits", _eth(": 30", f": {2**64}"), True),
    ("a counter read past 64 bits", _eth(": 10", f": {2**64}"), True),
    ("the largest count", _eth(": 10", f": {2**64 - 1}"), True),
    ("no count", _eth(": 10", ": N/A"), True),
    ("a counter not read that is no count", _eth(": 30", ": N/A"), True),
    ("a counter printed twice", ETHTOOL + "     rx_packets_phy: 11\n", True),
    ("ethtool's error", "Cannot get stats strings information: Operation not supported\n", True),
    ("no mlx5 counter", "NIC statistics:\n     rx_packets: 5\n", True),
    ("the header only", "NIC statistics:\n", True),
    ("nothing", "", True),
    ("two counters on a line", _eth("10\n     tx_packets_phy: 20", "10 tx_packets_phy: 20"), False),
    ("a blank line", _eth("     rx_crc", "\n     rx_crc"), False),
    ("CRLF", ETHTOOL.replace("\n", "\r\n"), False),
    ("two spaces after a colon", _eth(": 10", ":  10"), False),
]


@pytest.mark.parametrize(("case", "raw", "usual"), ETHTOOL_CASES, ids=[c[0] for c in ETHTOOL_CASES])
def test_ethtool(case: str, raw: str, usual: bool) -> None:
    check("ethtool", raw, usual=usual)


def _rails(*raws: str) -> list[tuple[str, str]]:
    return [(f"rail{i}", raw) for i, raw in enumerate(raws)]


FIVE = _eth("     rx_err_lane_2_phy: 1\n", "")  # the first five lines
LANE = "     rx_err_lane_2_phy: 1\n"
SEVEN = FIVE.replace("NIC statistics:\n", "NIC statistics:\n" + LANE) + LANE  # a counter twice: not plain
HOSTS: list[tuple[str, list[tuple[str, str]], bool]] = [  # (case, a host's outputs, read together)
    ("one print", _rails(ETHTOOL, ETHTOOL.replace(": 10", ": 11"), ETHTOOL), True),
    ("one print without header", _rails(*[_eth("NIC statistics:\n", "")] * 3), True),
    ("one output", _rails(ETHTOOL), False),
    ("no output", [], True),  # nothing to read one by one
    ("other names", _rails(ETHTOOL, _eth("rx_crc_errors_phy", "rx_symbol_err_phy")), False),
    ("one not a count", _rails(ETHTOOL, _eth(": 10", ": N/A")), False),
    ("one without its header", _rails(ETHTOOL, _eth("NIC statistics:\n", "")), False),
    ("one without its last newline", _rails(ETHTOOL, ETHTOOL[:-1]), False),
    ("another indentation", _rails(ETHTOOL, ETHTOOL.replace("     ", "\t")), False),
    ("one with a line more", _rails(ETHTOOL, ETHTOOL + "     rx_out_of_buffer: 3\n"), False),
    ("outputs that split the lines otherwise", _rails(FIVE, SEVEN), False),
    ("an unread counter past 64 bits", _rails(ETHTOOL, _eth(": 30", f": {2**64}")), False),
    ("not text", [("rail0", ETHTOOL), ("rail1", None)], False),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("case", "outputs", "together"), HOSTS, ids=[c[0] for c in HOSTS])
def test_ethtool_of_a_host_reads_as_port_by_port(
    case: str, outputs: list[tuple[str, str]], together: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = [host_ethtool.read_mlx5_ethtool_frame(raw, port=port, device="dev") for port, raw in outputs]
    for (port, raw), frame in zip(outputs, alone, strict=True):
        if raw is not None:
            assert frame == frame_of(parse_mlx5_ethtool(raw, port=port, device="dev"))
    calls = []
    real = host_ethtool.read_mlx5_ethtool_frame
    monkeypatch.setattr(host_ethtool, "read_mlx5_ethtool_frame", lambda raw, **kw: calls.append(1) or real(raw, **kw))
    assert host_ethtool.read_mlx5_ethtool_frames(outputs, device="dev") == alone
    assert (not calls) == together


# --- ib-counters (grep -H of sysfs) -----------------------------------------------------------------------------------


def _sysfs(values: dict[tuple[str, str], str] | None = None) -> str:
    """grep -H of mlx5_0 and mlx5_1: every PortCounters file, then hw_counters, ``values`` in place of the value of
    (device, group/name) ("": the line left out)."""
    values = values or {}
    lines = []
    for group, names in (
        ("counters", sorted({*LEGACY_COUNTER_BITS, *DATA_COUNTERS_32_OR_64})),
        ("hw_counters", ["lifespan", "np_cnp_sent", "out_of_sequence", "rp_cnp_handled"]),
    ):
        for dev in ("mlx5_0", "mlx5_1"):
            for n, name in enumerate(names):
                value = values.get((dev, f"{group}/{name}"), str(n + 3))
                if value:
                    lines.append(f"/sys/class/infiniband/{dev}/ports/1/{group}/{name}:{value}")
    return "\n".join(lines) + "\n"


SYSFS = _sysfs()
SYSFS_CASES: list[tuple[str, str, bool]] = [
    ("as grep -H prints it", SYSFS, True),
    ("no last newline", SYSFS[:-1], True),
    ("a counter read saturated", _sysfs({("mlx5_1", "counters/link_downed"): "255"}), True),
    ("a counter read one below saturation", _sysfs({("mlx5_1", "counters/link_downed"): "254"}), True),
    ("a data counter at 2**32 - 1", _sysfs({("mlx5_0", "counters/port_rcv_data"): str(2**32 - 1)}), True),
    ("a counter not read saturated", _sysfs({("mlx5_1", "counters/VL15_dropped"): "65535"}), True),
    ("a counter not read N/A", _sysfs({("mlx5_1", "counters/VL15_dropped"): "N/A (no PMA)"}), True),
    ("a counter read N/A", _sysfs({("mlx5_1", "counters/symbol_error"): "N/A (no PMA)"}), True),
    ("data words past 64 bits as octets", _sysfs({("mlx5_0", "counters/port_xmit_data"): str(2**62)}), True),
    ("data words just within", _sysfs({("mlx5_0", "counters/port_xmit_data"): str(2**62 - 1)}), True),
    ("a PortCounters file missing", _sysfs({("mlx5_1", "counters/link_downed"): ""}), True),
    ("the last port cut short", SYSFS[: SYSFS.rindex("/sys/")], True),
    ("ports with other hw counters", _sysfs({("mlx5_1", "hw_counters/np_cnp_sent"): ""}), True),
    (
        "a grep error",
        SYSFS + "grep: /sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_buffer: Permission denied\n",
        True,
    ),
    ("a name in both groups", SYSFS + "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/link_downed:9\n", True),
    ("not sysfs", "hello: 1\n", True),
    ("a path without its value", SYSFS.replace(":3\n", "\n3:", 1), True),
    ("a blank line", SYSFS.replace("\n", "\n\n", 1), False),
    ("a PCI path", SYSFS.replace("/sys/class/", "/sys/devices/pci0000:00/0000:00:01.0/"), False),
]


@pytest.mark.parametrize(("case", "raw", "usual"), SYSFS_CASES, ids=[c[0] for c in SYSFS_CASES])
def test_ib_counters(case: str, raw: str, usual: bool) -> None:
    check("ib-counters", raw, usual=usual)


def test_ib_counters_data_words_are_octets() -> None:
    frame = check("ib-counters", case_raw(SYSFS_CASES, "data words just within"))
    assert frame is not None and frame.ports == ["mlx5_0/1", "mlx5_1/1"]
    assert int(frame.values[0, frame.names.index("tx_octets")]) == (2**62 - 1) * 4
