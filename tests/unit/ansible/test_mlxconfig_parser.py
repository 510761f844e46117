"""The mlxconfig output parser on every recorded sample in tests/fixtures/tools/mlxconfig/ (sources in its README).

Expected values were read off the fixture files by hand, not taken from the parser's output.
"""

from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlxconfig import (
    MlxconfigError,
    array_range,
    parse_query,
    parse_set_result,
    set_token,
    split_indexed,
    split_value,
    strongest_reset,
    unknown_params_in,
    value_matches,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "tools" / "mlxconfig"


def load(name: str) -> str:
    return (FIX / name).read_text()


def test_targeted_extended_query_with_star_marker() -> None:
    q = parse_query(load("query_e_targeted_cx6dx.txt"))
    assert q.columns == ["Default", "Current", "Next Boot"]
    assert list(q.rows) == ["NUM_OF_VFS", "SRIOV_EN"]
    assert q.rows["NUM_OF_VFS"] == {"Default": "8", "Current": "0", "Next Boot": "0"}
    assert q.rows["SRIOV_EN"] == {"Default": "False(0)", "Current": "False(0)", "Next Boot": "False(0)"}
    assert q.modified == {"NUM_OF_VFS"}  # next (0) differs from default (8)
    assert q.device["Device type"] == "ConnectX6DX"
    assert q.device["Device"] == "0000:ca:00.0:"
    assert q.notes == ["The '*' shows parameters with next value different from default/current value."]
    assert split_value(q.value("SRIOV_EN")) == ("False", 0)


def test_bluefield_full_query_arrays_enums_and_single_space_columns() -> None:
    q = parse_query(load("query_e_bf2_arrays.txt"))
    assert len(q.rows) == 20
    assert q.rows["HOST_CHAINING_DESCRIPTORS"]["Next Boot"] == "Array[0..7]"
    assert array_range(q.value("HOST_CHAINING_TOTAL_BUFFER_SIZE", "Default")) == (0, 7)
    # "EMBEDDED_CPU(1)" fills its 16-character column but one space still separates the values
    assert q.rows["INTERNAL_CPU_MODEL"] == {
        "Default": "EMBEDDED_CPU(1)",
        "Current": "EMBEDDED_CPU(1)",
        "Next Boot": "EMBEDDED_CPU(1)",
    }
    assert split_value(q.value("KEEP_ETH_LINK_UP_P2")) == ("True", 1)
    assert split_value(q.value("NUM_OF_VL_P1")) == ("_4_VLs", 3)
    assert split_value(q.value("MEMIC_SIZE_LIMIT")) == ("_256KB", 1)
    assert q.modified == set()
    assert q.device["Device type"] == "BlueField2"


def test_operator_query_with_array_row_and_markers() -> None:
    q = parse_query(load("operator_test_query_e_with_array.txt"))
    assert q.modified == {"KEEP_IB_LINK_UP_P2", "MEMIC_SIZE_LIMIT"}
    assert q.rows["KEEP_IB_LINK_UP_P2"] == {"Default": "False(0)", "Current": "True(1)", "Next Boot": "True(1)"}
    assert q.value("MEMIC_SIZE_LIMIT") == "DISABLED(0)"
    assert q.value("MEMIC_SIZE_LIMIT", "Current") == "_256KB(1)"
    assert array_range(q.value("ESWITCH_HAIRPIN_DESCRIPTORS")) == (0, 7)
    assert value_matches("DISABLED", q.value("MEMIC_SIZE_LIMIT"))
    assert value_matches(0, q.value("MEMIC_SIZE_LIMIT"))
    assert value_matches("_256kb", q.value("MEMIC_SIZE_LIMIT", "Current"))  # names compare case-insensitively
    assert not value_matches(1, q.value("MEMIC_SIZE_LIMIT"))


def test_array_expanded_by_index_query() -> None:
    q = parse_query(load("operator_test_query_e_array_expanded.txt"))
    assert list(q.rows) == [f"ESWITCH_HAIRPIN_DESCRIPTORS[{i}]" for i in range(8)]
    assert all(row == {"Default": "128", "Current": "128", "Next Boot": "128"} for row in q.rows.values())
    assert split_indexed("ESWITCH_HAIRPIN_DESCRIPTORS[7]") == ("ESWITCH_HAIRPIN_DESCRIPTORS", 7)
    assert split_indexed("LINK_TYPE_P1") == ("LINK_TYPE_P1", None)


def test_wide_columns_and_mixed_raw_values_on_indexed_rows() -> None:
    q = parse_query(load("operator_test_query_e_indexed_cx9.txt"))
    assert list(q.rows) == [f"PCI_DOWNSTREAM_PORT_OWNER[{i}]" for i in (0, 1, 2, 4)]
    assert q.rows["PCI_DOWNSTREAM_PORT_OWNER[0]"]["Current"] == "148"
    assert q.rows["PCI_DOWNSTREAM_PORT_OWNER[1]"]["Current"] == "HOST_0(1)"
    assert q.value("PCI_DOWNSTREAM_PORT_OWNER[4]") == "DEVICE_DEFAULT(0)"
    assert q.modified == {
        "PCI_DOWNSTREAM_PORT_OWNER[0]",
        "PCI_DOWNSTREAM_PORT_OWNER[1]",
        "PCI_DOWNSTREAM_PORT_OWNER[4]",
    }


def test_query_without_e_has_only_next_boot() -> None:
    q = parse_query(load("query_nextboot_cx4.txt"))
    assert q.columns == ["Next Boot"]
    assert len(q.rows) == 24
    assert q.value("ROCE_CC_PRIO_MASK_P1") == "255"
    assert q.value("ROCE_CC_ALGORITHM_P1") == "ECN(0)"
    assert q.value("DCR_LIFO_SIZE") == "16384"
    assert value_matches(True, q.value("SRIOV_EN"))
    with pytest.raises(MlxconfigError, match="no 'Current' column"):
        q.value("NUM_OF_VFS", "Current")


def test_set_output_table_and_reboot_line() -> None:
    text = load("set_boot_options_cx6.txt")
    q = parse_query(text)
    assert q.columns == ["Next Boot", "New"]
    assert q.rows["BOOT_VLAN"] == {"Next Boot": "1", "New": "0"}
    assert q.rows["BOOT_UNDI_NETWORK_WAIT"] == {"Next Boot": "0", "New": "30"}
    assert q.rows["BOOT_LACP_DIS"] == {"Next Boot": "True(1)", "New": "True(1)"}
    assert parse_set_result(text) == ("reboot", "Please reboot machine to load new configurations.")


def test_set_output_asking_for_power_cycle() -> None:
    kind, msg = parse_set_result(load("set_power_cycle_derived.txt"))
    assert kind == "power_cycle"
    assert msg == "Please power cycle machine to load new configurations."


def test_unknown_parameter_error() -> None:
    text = load("unknown_param_derived.txt")
    assert unknown_params_in(text) == ["PF_NUM_SAT_PF"]
    with pytest.raises(MlxconfigError, match="Unknown Parameter: PF_NUM_SAT_PF"):
        parse_query(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Device #1:\n----------\n", "no 'Configurations:' table"),
        ("Configurations:   Default  Current  Next Boot\n         NUM_OF_VFS   8   0\n", "has 2 values"),
        ("Configurations:   Default  Nonsense  Next Boot\n", "unknown mlxconfig column title 'Nonsense'"),
        ("Configurations:   Default  Current\n", "no 'Next Boot' column"),
    ],
)
def test_unparseable_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(MlxconfigError, match=message):
        parse_query(text)


def test_set_output_without_done_or_reset_line_is_an_error() -> None:
    with pytest.raises(MlxconfigError, match="Done"):
        parse_set_result("Applying... Failed!\n")
    with pytest.raises(MlxconfigError, match="-I-"):
        parse_set_result("Applying... Done!\n")


@pytest.mark.parametrize(
    ("desired", "raw", "expected"),
    [
        (2, "ETH(2)", True),
        ("ETH", "ETH(2)", True),
        ("eth", "ETH(2)", True),
        ("ETH(2)", "ETH(2)", True),
        ("IB", "ETH(2)", False),
        (True, "True(1)", True),
        (False, "True(1)", False),
        ("True", "True(1)", True),
        ("0x30", "48", True),
        (48, "48", True),
        (8, "Array[0..7]", False),
        (0, "N/A", False),
    ],
)
def test_value_matches(desired: object, raw: str, expected: bool) -> None:
    assert value_matches(desired, raw) is expected


def test_set_token() -> None:
    assert set_token(True) == "1"
    assert set_token(False) == "0"
    assert set_token(255) == "255"
    assert set_token("ETH") == "ETH"
    assert set_token("ETH(2)") == "2"
    with pytest.raises(MlxconfigError):
        set_token("A B")


def test_strongest_reset_order() -> None:
    assert strongest_reset([]) == "none"
    assert strongest_reset(["none", "reboot", "none"]) == "reboot"
    assert strongest_reset(["reboot", "power_cycle"]) == "power_cycle"
    assert strongest_reset(["power_cycle", "mlxfwreset", "reboot"]) == "mlxfwreset"
    with pytest.raises(MlxconfigError, match="unknown reset kind 'skipped'"):
        strongest_reset(["reboot", "skipped"])
