"""plugins/module_utils/lnet.py on the recorded lnetctl samples (tests/fixtures/tools/lnetctl, sources in its README):
parsing, errors, mounts. The change planner's rules: test_lnet_plan.py.

Expected models are written out by hand from the sample texts (not copied from the parser's output).
"""

from __future__ import annotations

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet as L
from tests.unit.ansible.lnet_samples import GLOBAL_215, O2IB_LND, O2IB_TUN, current, ni, text

# --- parsing ------------------------------------------------------------------------------------------------------


def test_export_backup_215_and_216_load_to_the_same_model() -> None:
    expected_nets = [
        {"net": "o2ib", "nis": [ni("ib0", tunables=O2IB_TUN, lnd=O2IB_LND), ni("ib1", tunables=O2IB_TUN, lnd=O2IB_LND)]}
    ]
    old = L.parse_state(text("2.15/export_backup_o2ib_mr.txt"))
    new = L.parse_state(text("2.16/export_backup_o2ib_mr.txt"))
    assert old["nets"] == expected_nets
    assert new["nets"] == expected_nets
    assert old["global"] == GLOBAL_215
    assert new["global"] == {**GLOBAL_215, "max_recovery_ping_interval": 900}


def test_net_show_both_layouts() -> None:
    assert L.parse_state(text("2.15/net_show_o2ib_mr.txt")) == {
        "nets": [{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5@o2ib", "up"), ni("ib1", "10.20.1.5@o2ib", "up")]}],
        "global": {},
    }
    assert L.parse_state(text("2.16/net_show_o2ib_mr_tcp.txt")) == {
        "nets": [
            {"net": "o2ib", "nis": [ni("enp6s0", "10.20.0.5@o2ib", "up"), ni("enp7s0", "10.20.1.5@o2ib", "up")]},
            {"net": "tcp", "nis": [ni("enp5s0", "10.30.0.5@tcp", "up")]},
        ],
        "global": {},
    }
    assert L.parse_state(text("2.16/net_show_tcp.txt"))["nets"] == [
        {"net": "tcp", "nis": [ni("eth0", "10.20.0.5@tcp", "up")]}
    ]


def test_net_show_verbose_samples() -> None:
    tcp = L.parse_state(text("2.15/net_show_v_tcp.txt"))
    assert tcp["nets"] == [
        {
            "net": "tcp",
            "nis": [
                ni(
                    "bond0",
                    "10.20.0.5@tcp",
                    "up",
                    {"peer_timeout": 180, "peer_credits": 8, "peer_buffer_credits": 0, "credits": 256},
                    {"conns_per_peer": 1},
                )
            ],
        }
    ]
    v216 = L.parse_state(text("2.16/net_show_v_o2ib.txt"))
    assert v216["nets"] == [{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5@o2ib", "up", O2IB_TUN, O2IB_LND)]}]


def test_older_layout_with_lnd_tunables_inside_tunables() -> None:
    """DDN's recorded sample prints o2ib's LND keys under tunables: and an empty lnd tunables: (None)."""
    state = L.parse_state(text("older/net_show_v2_o2ib_mr_lnd_in_tunables.txt"))
    assert state["nets"] == [
        {
            "net": "o2ib",
            "nis": [
                ni("ib0", "10.20.0.5@o2ib", "up", O2IB_TUN, O2IB_LND),
                ni("ib1", "10.20.1.5@o2ib", "up", O2IB_TUN, O2IB_LND),
            ],
        }
    ]


def test_names_are_normalised() -> None:
    assert L.normalise_net("o2ib0") == "o2ib"
    assert L.normalise_net("o2ib") == "o2ib"
    assert L.normalise_net("o2ib00") == "o2ib"
    assert L.normalise_net("o2ib1") == "o2ib1"
    assert L.normalise_net("tcp0") == "tcp"
    assert L.normalise_net("tcp10") == "tcp10"
    assert L.nid_net("10.20.0.5@o2ib0") == "o2ib"
    assert L.nid_net("mgs-host") is None
    assert L.nid_net("10.20.0.5@o2ib-1") is None
    doc = (
        "net:\n    - net type: o2ib0\n      local NI(s):\n        - interfaces:\n              0: ib0\n"
        "global:\n    max_intf: 200\n"
    )
    assert L.parse_state(doc) == {"nets": [{"net": "o2ib", "nis": [ni("ib0")]}], "global": {"max_interfaces": 200}}


def test_lnet_down_is_recognised_in_every_layout() -> None:
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.15/lnet_down.stderr"))] == [
        ("show", "net", -100, "cannot get networks: Network is down")
    ]
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.16/lnet_down_2.15.90.stderr"))] == [
        ("show", "net", -3, "Network is down")
    ]
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.16/lnet_down.stderr"))] == [
        ("show", "net", -100, "LNet stack down")
    ]
    for name in ("2.15/lnet_down.stderr", "2.16/lnet_down_2.15.90.stderr", "2.16/lnet_down.stderr"):
        assert L.lnet_down(text(name)), name
        assert not L.modules_missing(text(name)), name
    for name in (
        "2.15/net_show_o2ib_mr.txt",
        "2.16/net_show_tcp.txt",
        "2.15/error_add_eexist.stderr",
        "2.15/not_loaded.stderr",
    ):
        assert not L.lnet_down(text(name)), name


def test_modules_not_loaded() -> None:
    sample = text("2.15/not_loaded.stderr")
    assert L.modules_missing(sample)
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(sample)] == [
        ("show", "net", -19, "cannot get networks: No such device")
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2.15/error_add_couldnt_query_intf.stderr", ("add", "net", -1, "couldn't query intf ib0")),
        ("2.15/error_add_eexist.stderr", ("add", "net", -17, "cannot add network: File exists")),
        ("2.16/error_add_eexist.stderr", ("add", "net", -17, "cannot add network: File exists")),
        ("2.15/error_del_enoent.stderr", ("del", "net", -2, "cannot del network: No such file or directory")),
        (
            "2.15/error_unconfigure_ebusy.stderr",
            ("unconfigure", "lnet", -16, "LNet unconfigure error: Device or resource busy"),
        ),
    ],
)
def test_errors_are_parsed(name: str, expected: tuple) -> None:
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text(name))] == [expected]


@pytest.mark.parametrize(
    "name",
    [
        "2.15/net_show_o2ib_mr.txt",
        "2.15/export_backup_o2ib_mr.txt",
        "2.16/export_backup_o2ib_mr.txt",
        "2.16/net_show_v_o2ib.txt",
        "older/net_show_v2_o2ib_mr_lnd_in_tunables.txt",
    ],
)
def test_cut_reason_of_whole_and_cut_output(name: str) -> None:
    """lnetctl's whole output is not cut; cut inside its last NI (before ``CPT``, which every NI of these has) it
    is, and the module fails instead of configuring from a partial view."""
    whole, export = text(name), "export" in name
    assert L.cut_reason(whole, export=export) is None
    cut = whole[: whole.rindex("CPT:")] if "CPT:" in whole else whole[: whole.rindex("0: ib1")]
    assert "cut short" in (L.cut_reason(cut, export=export) or "")
    if export:  # cut after the networks, before the peers and global settings
        assert "no 'global:'" in (L.cut_reason(whole[: whole.index("\npeer:") + 1], export=True) or "")


def test_output_that_is_not_yaml() -> None:
    with pytest.raises(L.LnetError, match="not YAML"):
        L.parse_state("net:\n  - net type: [o2ib\n")
    assert L.parse_errors("Segmentation fault") == []
    with pytest.raises(L.LnetError, match="unexpected entry"):
        L.parse_state("net:\n    - foo: bar\n")


# --- mounts -------------------------------------------------------------------------------------------------------


def test_proc_mounts() -> None:
    mounts = L.parse_proc_mounts(
        "sysfs /sys sysfs rw 0 0\n"
        "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs\\0401 lustre rw,flock,lazystatfs 0 0\n"
        "10.20.0.9@tcp:/scratch/sub /scratch lustre rw 0 0\n"
    )
    assert mounts == [
        {
            "source": "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1",
            "mount_point": "/mnt/lfs 1",
            "fsname": "lfs1",
            "nids": ["10.20.0.1@o2ib", "10.20.1.1@o2ib", "10.20.0.2@o2ib"],
        },
        {
            "source": "10.20.0.9@tcp:/scratch/sub",
            "mount_point": "/scratch",
            "fsname": "scratch",
            "nids": ["10.20.0.9@tcp"],
        },
    ]


@pytest.mark.parametrize(
    "joint",
    ["...\n", "---\n", "...\n---\n"],
    ids=["document end", "document start", "end and start"],
)
@pytest.mark.parametrize("explicit_start", [False, True])
def test_export_in_several_documents_is_merged(joint: str, explicit_start: bool) -> None:
    """2.16+ ``export`` prints the Netlink part (libyaml, which may mark its document with ``---``/``...``) and then
    the global settings through cYAML (lnetctl.c ``jt_export``); every document is read and merged, nothing is
    dropped."""
    sample = text("2.16/export_backup_o2ib_mr.txt")
    cut = sample.index("\nglobal:\n") + 1
    joined = ("---\n" if explicit_start else "") + sample[:cut] + joint + sample[cut:]
    expected = L.parse_state(sample)
    assert expected["nets"] and expected["global"]
    assert L.parse_state(joined) == expected


def test_documents_with_the_same_key_are_joined_and_a_bad_one_fails() -> None:
    first = "net:\n-     net type: o2ib\n      local NI(s):\n      -     interfaces:\n                  0: ib0\n"
    second = "net:\n    - net type: tcp\n      local NI(s):\n        - interfaces:\n              0: eth0\n"
    state = L.parse_state(first + "...\n" + second + "global:\n    discovery: 0\n")
    assert [(n["net"], [i["interface"] for i in n["nis"]]) for n in state["nets"]] == [
        ("o2ib", ["ib0"]),
        ("tcp", ["eth0"]),
    ]
    assert state["global"] == {"discovery": 0}
    with pytest.raises(L.LnetError, match="not YAML"):
        L.parse_state(first + "---\nglobal: [discovery\n")


def test_net_names_and_mount_table_have_one_host_copy() -> None:
    """Network names and /proc/mounts are read by module_utils/lustre_mount.py only; lnet.py uses it (the same
    function objects, so the two modules cannot drift apart)."""
    import inspect

    from ansible_collections.aiinfra.hwaac.plugins.module_utils import lustre_mount as M

    assert L.normalise_net is M.normalise_net and L.parse_mounts is M.parse_mounts
    assert L.parse_source is M.parse_source
    source = inspect.getsource(L)
    assert "def normalize_net" not in source and "def _unescape" not in source
    # an unreadable network name in lnetctl output says what a network name is
    with pytest.raises(
        L.LnetError,
        match=r"^lnetctl printed net type '0@x': '0@x' is not an LNet network name "
        r"\(expected an LND name and an optional number",
    ):
        L.parse_state("net:\n    - net type: 0@x\n")
    # a mount whose source cannot be read counts as using every local network (the planner refuses conservatively)
    (odd,) = L.parse_proc_mounts("lustre-odd:/x /mnt/odd lustre rw 0 0\n")
    assert odd == {"source": "lustre-odd:/x", "mount_point": "/mnt/odd", "fsname": "", "nids": []}
    assert L.used_nets([odd], current(("o2ib", [("ib0", 32)]), ("tcp", [("eth0", 8)]))) == {
        "o2ib": ["/mnt/odd"],
        "tcp": ["/mnt/odd"],
    }
