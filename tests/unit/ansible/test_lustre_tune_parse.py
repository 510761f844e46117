"""Parsers and renderers of plugins/module_utils/lustre_params.py on the recorded lctl samples of
tests/fixtures/tools/lctl/ (sources in its README). Expected values were read off the recordings by hand; the
systemd unit names were checked against systemd-escape 255 (`systemd-escape --path`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_params import (
    ParamError,
    check_params,
    exec_quote,
    mount_unit_name,
    outside_block_settings,
    parse_get_param,
    parse_version,
    render_unit,
    same_value,
    set_order,
    systemd_escape_path,
    update_params_file,
    version_tuple,
)

LCTL = Path(__file__).resolve().parents[2] / "fixtures" / "tools" / "lctl"


def test_get_param_one_line_per_device() -> None:
    values = parse_get_param((LCTL / "get_param_aws_tips.txt").read_text())
    assert len(values) == 14
    assert values["osc.lfs1-OST0000-osc-ffff8c4d0cd43800.max_rpcs_in_flight"] == "32"
    assert values["mdc.lfs1-MDT0003-mdc-ffff8c4d0cd43800.max_mod_rpcs_in_flight"] == "50"
    assert values["ldlm.namespaces.lfs1-OST0000-osc-ffff8c4d0cd43800.lru_max_age"] == "600000"
    assert [n for n in values if n.startswith("llite.")] == [
        "llite.lfs1-ffff8c4d0cd43800.statahead_max",
        "llite.lfs1-ffff8c4d0cd43800.statahead_agl",
        "llite.lfs1-ffff8c4d0cd43800.statahead_xattr",
    ]
    # set_param prints the same NAME=VALUE lines
    assert (
        parse_get_param((LCTL / "set_param_aws_tips.txt").read_text())["llite.lfs1-ffff8c4d0cd43800.statahead_max"]
        == "512"
    )


def test_import_block_as_get_param_prints_it() -> None:
    block = (LCTL / "osc_import_2.12.7.txt").read_text()
    text = "osc.lfs1-OST0004-osc-ffff9068ea7c9000.import=\n" + block  # read_param: NAME= then the long value
    values = parse_get_param(text)
    assert list(values) == ["osc.lfs1-OST0004-osc-ffff9068ea7c9000.import"]
    assert values["osc.lfs1-OST0004-osc-ffff9068ea7c9000.import"].startswith("import:\n    name: lfs1-OST0004")
    assert values["osc.lfs1-OST0004-osc-ffff9068ea7c9000.import"] == block.rstrip("\n")


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ((LCTL / "version_2.9.55.txt").read_text(), (2, 9, 55)),
        ((LCTL / "version_2.6.52.txt").read_text(), (2, 6, 52)),
        ("version=2.15.5\n", (2, 15, 5)),
        ("2.14.0_ddn98\n", (2, 14, 0)),
        ("2.17.0\n", (2, 17, 0)),
    ],
)
def test_versions(text: str, version: tuple) -> None:
    assert parse_version(text)[0] == version


def test_version_errors() -> None:
    with pytest.raises(ParamError, match="cannot read a Lustre version"):
        parse_version("kernel: patchless_client\n")
    with pytest.raises(ParamError, match=r"^client_version: 'v2' is not a Lustre version"):
        version_tuple("v2")
    assert version_tuple("2.17") == (2, 17)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/mnt/lfs1", "mnt-lfs1"),
        ("/mnt/my data", "mnt-my\\x20data"),
        ("/mnt/lfs-1", "mnt-lfs\\x2d1"),
        ("/", "-"),
        ("/.hidden/x", "\\x2ehidden-x"),
        ("/mnt/\u00fc", "mnt-\\xc3\\xbc"),
        ("/mnt//lfs1/", "mnt-lfs1"),
    ],
)
def test_systemd_path_escaping(path: str, name: str) -> None:
    assert systemd_escape_path(path) == name
    real = shutil.which("systemd-escape")
    if real:  # the real tool agrees where it is installed
        assert subprocess.run([real, "--path", path], capture_output=True, text=True).stdout.strip() == name


def test_systemd_path_escaping_refuses_unnormalised_paths() -> None:
    with pytest.raises(ParamError, match=r"^mount_point: '/mnt/\.\./x' is not a normalised path"):
        systemd_escape_path("/mnt/../x")
    with pytest.raises(ParamError, match="must be an absolute path"):
        systemd_escape_path("mnt/lfs1")


def test_exec_start_quoting() -> None:
    assert exec_quote("osc.lfs1-OST*.max_rpcs_in_flight=32") == "osc.lfs1-OST*.max_rpcs_in_flight=32"
    assert exec_quote("jobid_name=%e.%u") == "jobid_name=%%e.%%u"
    assert exec_quote("x=$HOME") == "x=$$HOME"
    assert exec_quote("a b") == '"a b"'
    assert exec_quote('say "hi"') == '"say \\"hi\\""'


def test_params_checked_and_ordered() -> None:
    params, warnings = check_params(
        {
            "mdc.lfs1-MDT*.max_mod_rpcs_in_flight": 50,
            "osc.lfs1-OST*.checksums": False,
            "mdc.lfs1-MDT*.max_rpcs_in_flight": 64.0,
            "jobid_var": "procname_uid",
        },
        "lfs1",
    )
    assert params == {
        "mdc.lfs1-MDT*.max_mod_rpcs_in_flight": "50",
        "osc.lfs1-OST*.checksums": "0",
        "mdc.lfs1-MDT*.max_rpcs_in_flight": "64",
        "jobid_var": "procname_uid",
    }
    assert warnings == [
        "params: jobid_var is not scoped to file system lfs1; it applies to every Lustre file system "
        "mounted on this node"
    ]
    assert set_order(params) == [
        "mdc.lfs1-MDT*.max_rpcs_in_flight",
        "osc.lfs1-OST*.checksums",
        "jobid_var",
        "mdc.lfs1-MDT*.max_mod_rpcs_in_flight",
    ]
    with pytest.raises(ParamError, match=r"^params: key 'osc lfs1' is not an lctl parameter pattern"):
        check_params({"osc lfs1": 1})
    with pytest.raises(ParamError, match=r"^params\['osc.\*.x'\]: 'a=b' must be a non-empty one-line value"):
        check_params({"osc.*.x": "a=b"})
    with pytest.raises(ParamError, match="non-empty mapping"):
        check_params({})


def test_same_value() -> None:
    assert same_value("32", "32") and same_value("32", "32.0") and same_value(" 8\n", "8")
    assert not same_value("8", "32") and not same_value("healthy", "NOT HEALTHY")


def test_unit_rendering() -> None:
    unit = render_unit(
        "lfs1",
        "/mnt/lfs1",
        {"mdc.lfs1-MDT*.max_mod_rpcs_in_flight": "50", "mdc.lfs1-MDT*.max_rpcs_in_flight": "64"},
        "/usr/sbin/lctl",
    )
    lines = unit.splitlines()
    assert "After=mnt-lfs1.mount" in lines and "BindsTo=mnt-lfs1.mount" in lines
    assert lines[lines.index("[Install]") + 1] == "WantedBy=mnt-lfs1.mount"
    assert [ln for ln in lines if ln.startswith("ExecStart=")] == [
        "ExecStart=/usr/sbin/lctl set_param mdc.lfs1-MDT*.max_rpcs_in_flight=64",
        "ExecStart=/usr/sbin/lctl set_param mdc.lfs1-MDT*.max_mod_rpcs_in_flight=50",
    ]
    assert "Type=oneshot" in lines and "RemainAfterExit=yes" in lines
    assert mount_unit_name("/mnt/scratch data") == "mnt-scratch\\x20data.mount"


def test_params_file_block_in_the_shipped_file() -> None:
    shipped = (LCTL / "mount.client.params.shipped").read_text()
    params = {"osc.lfs1-OST*.max_rpcs_in_flight": "32", "mdc.lfs1-MDT*.max_rpcs_in_flight": "64"}
    new = update_params_file(shipped, "lfs1", params)
    assert new.startswith(shipped)  # the shipped comments stay as they are
    assert new[len(shipped) :].splitlines() == [
        "",
        "# BEGIN hwaac lustre_tune lfs1 (managed by aiinfra.hwaac.lustre_tune; edits inside are replaced)",
        "osc.lfs1-OST*.max_rpcs_in_flight=32",
        "mdc.lfs1-MDT*.max_rpcs_in_flight=64",
        "# END hwaac lustre_tune lfs1",
    ]
    assert update_params_file(new, "lfs1", params) == new
    other = update_params_file(new, "lfs2", {"osc.lfs2-OST*.checksums": "0"})
    changed = update_params_file(other, "lfs1", {"osc.lfs1-OST*.max_rpcs_in_flight": "16"})
    assert "osc.lfs1-OST*.max_rpcs_in_flight=16" in changed and "max_rpcs_in_flight=32" not in changed
    assert "osc.lfs2-OST*.checksums=0" in changed and changed.count("# BEGIN hwaac lustre_tune lfs1") == 1
    assert update_params_file(changed, "lfs1", None) == update_params_file(other, "lfs1", None)
    assert outside_block_settings(new + "mdc.*.max_rpcs_in_flight=16\n", "lfs1") == {"mdc.*.max_rpcs_in_flight": "16"}


def test_scoping_warning_needs_the_fsname_and_its_dash() -> None:
    """``lfs1`` inside ``lfs10-OST*`` is not scoped to lfs1: the pattern also matches lfs10's devices (lctl names
    devices FSNAME-OSTxxxx-osc-..., FSNAME-MDTxxxx-mdc-..., FSNAME-<instance> for llite)."""
    warn = "is not scoped to file system lfs1"
    for pattern in (
        "osc.lfs10-OST*.max_rpcs_in_flight",
        "osc.xlfs1-OST*.max_rpcs_in_flight",
        "osc.lfs1*.max_rpcs_in_flight",
        "osc.*lfs1-OST*.max_rpcs_in_flight",
    ):
        assert any(warn in w for w in check_params({pattern: 8}, "lfs1")[1]), pattern
    for pattern in (
        "osc.lfs1-OST*.max_rpcs_in_flight",
        "llite.lfs1-*.max_cached_mb",
        "ldlm.namespaces.lfs1-OST*.lru_size",
        "mdc.lfs1-MDT0000-mdc-*.max_rpcs_in_flight",
    ):
        assert check_params({pattern: 8}, "lfs1")[1] == [], pattern


@pytest.mark.parametrize(
    "text",
    [
        "a=1\n# BEGIN hwaac lustre_tune lfs1 (managed)\nosc.lfs1-OST*.checksums=0\nmdc.*.max_rpcs_in_flight=16\n",
        "a=1\n# BEGIN hwaac lustre_tune lfs1\nx=1\n# BEGIN hwaac lustre_tune lfs1\ny=2\n# END hwaac lustre_tune lfs1\n",
    ],
)
def test_params_file_with_a_begin_marker_and_no_end_is_refused(text: str) -> None:
    """An END line lost by hand editing would make the block run to the end of the file: the lines after it
    (someone's own settings) would be dropped as if they were the module's. Refused, naming the line."""
    with pytest.raises(
        ParamError,
        match=r"line 2: '# BEGIN hwaac lustre_tune lfs1.*' opens the hwaac block of "
        r"lfs1 but no '# END hwaac lustre_tune lfs1' line (closes it|follows before "
        r"the next BEGIN)",
    ):
        update_params_file(text, "lfs1", {"osc.lfs1-OST*.max_rpcs_in_flight": "32"})
    with pytest.raises(ParamError, match="line 2"):
        update_params_file(text, "lfs1", None)
    with pytest.raises(ParamError, match="line 2"):
        outside_block_settings(text, "lfs1")
    # another file system's block is not ours to judge
    assert update_params_file(text.replace("lfs1", "lfs2"), "lfs1", None) == text.replace("lfs1", "lfs2")


def test_block_of_lfs10_is_not_the_block_of_lfs1() -> None:
    lfs10 = update_params_file("", "lfs10", {"osc.lfs10-OST*.checksums": "0"})
    assert outside_block_settings(lfs10, "lfs1") == {"osc.lfs10-OST*.checksums": "0"}
    assert outside_block_settings(lfs10, "lfs10") == {}
    both = update_params_file(lfs10, "lfs1", {"osc.lfs1-OST*.checksums": "1"})
    assert update_params_file(both, "lfs1", None) == lfs10 + "\n"  # the blank line put before lfs1's block stays
