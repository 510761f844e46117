"""SLO defaults and the loader's errors (file, line, field, value, valid range)."""

from __future__ import annotations

import pytest

from hwaac.telemetry.slo import SloError, default_slos, load_slo_text

GOOD = "version: 1\nslos:\n  pre_fec_ber:\n    max: 2.4e-4\n    unit: ratio\n    source: IEEE 802.3bs\n"


def test_defaults_cover_every_sli_and_cite_a_source() -> None:
    slos = default_slos().slos
    assert set(slos) == {
        "availability",
        "coverage",
        "loss_ratio",
        "pre_fec_ber",
        "fec_uncorrectable_per_s",
        "pause_ratio",
        "ecn_mark_ratio",
        "path_diversity",
        "bgp_drops_per_hour",
        "probe_loss_ratio",
    }
    assert slos["pre_fec_ber"].max == 2.4e-4 and slos["availability"].min == 0.999
    assert slos["coverage"].min == 0.99
    assert all(len(o.source) > 40 for o in slos.values())


def test_a_valid_file_loads() -> None:
    assert load_slo_text(GOOD, "f.yaml").slos["pre_fec_ber"].max == 2.4e-4


# text edit of GOOD -> field path, line, value, words of what is valid
BAD = [
    ("negative bound", ("max: 2.4e-4", "max: -1"), "slos.pre_fec_ber.max", 4, -1, "greater than or equal to 0"),
    ("ratio above 1", ("max: 2.4e-4", "max: 3"), "slos.pre_fec_ber.max", 4, 3.0, "0 to 1"),
    (
        "warn after the bound",
        ("max: 2.4e-4", "max: 2.4e-4\n    warn: 0.5"),
        "slos.pre_fec_ber.warn",
        5,
        0.5,
        "at most 0.00024",
    ),
    (
        "coverage above 1",
        ("pre_fec_ber:\n    max: 2.4e-4", "coverage:\n    min: 1.5"),
        "slos.coverage.min",
        4,
        1.5,
        "0 to 1",
    ),
    ("unknown SLI", ("pre_fec_ber:", "jitter:"), "slos.jitter", 3, "jitter", "availability"),
    ("unknown field", ("unit: ratio", "unit: ratio\n    colour: red"), "slos.pre_fec_ber.colour", 6, None, ""),
    ("text for a number", ("max: 2.4e-4", "max: low"), "slos.pre_fec_ber.max", 4, "low", "number"),
    ("wrong version", ("version: 1", "version: 2"), "version", 1, 2, "less than or equal to 1"),
]


@pytest.mark.parametrize(("case", "edit", "path", "line", "value", "valid"), BAD, ids=[b[0] for b in BAD])
def test_errors_name_file_line_field_value_and_range(
    case: str, edit: tuple[str, str], path: str, line: int, value: object, valid: str
) -> None:
    with pytest.raises(SloError) as err:
        load_slo_text(GOOD.replace(*edit), "my-slo.yaml")
    issue = next(i for i in err.value.issues if i.path == path)
    assert (issue.file, issue.line, issue.value) == ("my-slo.yaml", line, value) and valid in issue.valid


def test_both_or_no_bound_is_refused() -> None:
    with pytest.raises(SloError, match="exactly one of min and max"):
        load_slo_text(GOOD.replace("max: 2.4e-4", "max: 1.0e-4\n    min: 0.0"), "f.yaml")
