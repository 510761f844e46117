"""mlnx_qos and RoCE sysfs parsers on the recorded samples (tests/fixtures/tools/mlnx_qos/, .../cma_roce_tos/);
and the mlnx_qos fake printing the same bytes as the recorded sample for the same state.

Expected values were read off the fixture files by hand.
"""

import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlnx_qos import (
    MlnxQosError,
    parse_dscp2prio,
    parse_mlnx_qos,
    parse_pfc,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.roce_sysfs import RoceSysfsError, parse_traffic_class

TESTS = Path(__file__).resolve().parents[2]
FIX = TESTS / "fixtures" / "tools"
FAKE_BIN = TESTS / "fakes" / "bin"


def test_netarbiter_sample() -> None:
    st = parse_mlnx_qos((FIX / "mlnx_qos" / "trust_dscp_pfc3_netarbiter.txt").read_text())
    assert st.trust == "dscp"
    assert st.dcbx == "OS controlled"
    assert st.cable_len == 7
    assert st.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    assert st.dscp2prio is not None
    assert len(st.dscp2prio) == 64
    assert st.dscp2prio[26] == 3
    assert st.dscp2prio[48] == 6
    assert st.dscp2prio[0] == 0
    assert st.dscp2prio[63] == 7
    assert st.as_dict()["pfc"] == "0,0,0,1,0,0,0,0"


def test_pcp_trust_has_no_map_and_a_long_priority_wraps() -> None:
    pcp = (
        "DCBX mode: OS controlled\nPriority trust state: pcp\nCable len: 7\nPFC configuration:\n"
        "\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   0   0   0   0   0   \n"
    )
    st = parse_mlnx_qos(pcp)
    assert st.trust == "pcp"
    assert st.dscp2prio is None
    # printAppSelector puts at most 8 DSCPs on a line and repeats "prio:N dscp:" for the rest
    wrapped = pcp.replace("trust state: pcp", "trust state: dscp").replace(
        "Cable len", "dscp2prio mapping:\n\tprio:3 dscp:31,30,29,28,27,26,25,24,\n\tprio:3 dscp:05,\nCable len"
    )
    st = parse_mlnx_qos(wrapped)
    assert st.dscp2prio == {31: 3, 30: 3, 29: 3, 28: 3, 27: 3, 26: 3, 25: 3, 24: 3, 5: 3}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DCBX mode: OS controlled\nCable len: 7\n", "no 'Priority trust state:'"),
        ("Priority trust state: pcp\n", "no 'PFC configuration:'"),
        ("Priority trust state: pcp\nPFC configuration:\n\tpriority 0 1 2\n\tenabled 0 0 0\n", "PFC priority header"),
        ("Priority trust state is not supported on your system\n", "not supported"),
        (
            "Priority trust state: dscp\nPFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n"
            "\tenabled     0   0   0   1   0   0   0   0\n",
            "no 'dscp2prio mapping:'",
        ),
    ],
)
def test_unparseable_mlnx_qos_is_an_error(text: str, message: str) -> None:
    with pytest.raises(MlnxQosError, match=message):
        parse_mlnx_qos(text)


def test_desired_value_validation() -> None:
    assert parse_pfc("0,0,0,1,0,0,0,0") == [0, 0, 0, 1, 0, 0, 0, 0]
    assert parse_pfc([0, 0, 0, 1, 0, 0, 0, 0]) == [0, 0, 0, 1, 0, 0, 0, 0]
    with pytest.raises(MlnxQosError, match="8 values"):
        parse_pfc("0,0,1")
    assert parse_dscp2prio({"26": 3, "48": 6}) == {26: 3, 48: 6}
    with pytest.raises(MlnxQosError, match="out of range"):
        parse_dscp2prio({"64": 3})


def test_traffic_class_formats() -> None:
    assert parse_traffic_class((FIX / "cma_roce_tos" / "traffic_class_global_106.txt").read_text()) == 106
    assert parse_traffic_class("") is None  # nothing set: the kernel prints nothing
    assert parse_traffic_class("106\n") == 106  # a plain file after "echo 106 >" (the test tree)
    assert parse_traffic_class("-1") is None
    with pytest.raises(RoceSysfsError):
        parse_traffic_class("tclass=106 dst_ip=1.2.3.4")


def test_cma_roce_tos_sample_is_the_value() -> None:
    assert (FIX / "cma_roce_tos" / "set_106_netarbiter.txt").read_text().strip() == "106"


def test_mlnx_qos_fake_prints_the_recorded_sample(tmp_path: Path) -> None:
    env = {**os.environ, "HWAAC_FAKE_STATE": str(tmp_path)}
    subprocess.run(
        [str(FAKE_BIN / "mlnx_qos"), "-i", "eth4", "--pfc", "0,0,0,1,0,0,0,0"], env=env, check=True, capture_output=True
    )
    out = subprocess.run(
        [str(FAKE_BIN / "mlnx_qos"), "-i", "eth4", "--trust", "dscp"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # the sample shows the real tool's tabs expanded to spaces
    assert out.expandtabs(8) == (FIX / "mlnx_qos" / "trust_dscp_pfc3_netarbiter.txt").read_text()
