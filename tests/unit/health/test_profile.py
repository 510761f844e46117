"""SKU health profiles: the shipped ones load, every threshold names its method, bad files name file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.profile import ProfileError, builtin_profiles, load_profile, load_profile_text

SHIPPED = Path(__file__).resolve().parents[3] / "src/hwaac/health/profiles"


def test_shipped_profiles_load_with_methods_and_sources() -> None:
    names = builtin_profiles()
    assert names == ["hgx-h100-8x400g", "hgx-h200-8x400g"]
    for name in names:
        profile = load_profile(name)
        assert profile.sku == name
        assert profile.gpu.count == 8 and profile.nic.rails == 8 and profile.nic.rate_gbits_per_s == 400
        perf = profile.performance
        for threshold in (
            perf.nccl_allreduce_single_node_busbw_gbytes_per_s,
            perf.nccl_allreduce_multi_node_busbw_gbytes_per_s,
            perf.ib_write_bw_per_port_gbits_per_s,
            perf.host_to_device_gbytes_per_s,
            perf.device_to_device_gbytes_per_s,
        ):
            assert threshold.source.strip()
            assert threshold.warn_below is None or threshold.warn_below >= threshold.min
        # the multi-node gate is only meaningful with RING forced over >= 2 nodes
        multi = perf.nccl_allreduce_multi_node_busbw_gbytes_per_s.method
        assert multi.nccl_algo == "RING" and multi.min_nodes == 2
        assert perf.nccl_allreduce_single_node_busbw_gbytes_per_s.method.nodes == 1


def test_profile_by_path(tmp_path: Path) -> None:
    text = (SHIPPED / "hgx-h200-8x400g.yml").read_text().replace("sku: hgx-h200-8x400g", "sku: my-h200")
    path = tmp_path / "my.yml"
    path.write_text(text)
    assert load_profile(path).sku == "my-h200"


def test_bad_value_names_file_line_field_and_valid() -> None:
    text = (SHIPPED / "hgx-h200-8x400g.yml").read_text().replace("link_layer: Ethernet", "link_layer: Ethernt")
    with pytest.raises(ProfileError) as err:
        load_profile_text(text, file="p.yml")
    (issue,) = err.value.issues
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "Ethernt" in t)
    assert (issue.file, issue.line, issue.path, issue.value) == ("p.yml", line, "nic.link_layer", "Ethernt")
    assert "InfiniBand" in issue.valid and "Ethernet" in issue.valid


def test_unknown_field_and_threshold_order() -> None:
    text = (SHIPPED / "hgx-h200-8x400g.yml").read_text()
    text = text.replace("  rails: 8\n", "  rails: 8\n  rail: 8\n").replace("min: 48\n", "min: 60\n")
    with pytest.raises(ProfileError) as err:
        load_profile_text(text, file="p.yml")
    messages = {i.path: i.message for i in err.value.issues}
    assert messages["nic.rail"] == "unknown field 'rail'"
    assert any("warn_below (50.4) must be >= min (60" in m for m in messages.values())


def test_unknown_profile_lists_shipped() -> None:
    with pytest.raises(ProfileError) as err:
        load_profile("hgx-b300")
    assert "hgx-h200-8x400g" in str(err.value) and "'hgx-b300'" in str(err.value)
