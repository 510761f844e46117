"""The qualification gate's rules: every blocker named, admission only without any."""

from __future__ import annotations

from hwaac.health.profile import load_profile
from hwaac.health.qualify import counter_codes, qualify_su

PROFILE = load_profile("hgx-h200-8x400g")
NODES = ["gpu-su01-h01", "gpu-su01-h02"]
STAGES = {"quick": "PASS", "dcgm": "PASS", "single_node": "PASS", "ib_pairwise": "PASS"}


def report(status: str = "PASS", findings: list[dict] | None = None, stages: dict | None = None) -> dict:
    findings = findings or []
    return {
        "status": status,
        "codes": sorted({f["code"] for f in findings}),
        "findings": findings,
        "stages": STAGES if stages is None else stages,
    }


SU = {"hosts": NODES, "status": "PASS", "codes": []}
BURNING = dict.fromkeys(NODES, "burn_in")


def test_all_passed_is_admitted() -> None:
    q = qualify_su(1, NODES, {n: report() for n in NODES}, SU, BURNING, PROFILE)
    assert q.admitted and q.blockers == []
    warn = report("WARN", [{"code": "NVLINK_ERRORS", "subject": "gpu1", "status": "WARN"}])
    assert qualify_su(1, NODES, {NODES[0]: warn, NODES[1]: report()}, SU, BURNING, PROFILE).admitted


def test_every_blocker_is_named() -> None:
    grown = report("WARN", [{"code": "NIC_SYMBOL_ERROR_RATE", "subject": "mlx5_5 port 1", "status": "WARN"}])
    q = qualify_su(
        1,
        [*NODES, "gpu-su01-h03", "gpu-su01-h04"],
        {
            NODES[0]: report("FAIL", [{"code": "GPU_ROW_REMAP_PENDING", "subject": "gpu3"}]),
            NODES[1]: grown,
            "gpu-su01-h03": None,
            "gpu-su01-h04": report(stages={"quick": "PASS"}),
        },
        {"hosts": NODES, "status": "FAIL", "codes": ["NCCL_BUSBW_LOW"]},
        {**BURNING, "gpu-su01-h03": "burn_in", "gpu-su01-h04": "quarantine"},
        PROFILE,
    )
    assert not q.admitted
    assert q.blockers == [
        "gpu-su01-h01: burn-in FAIL (GPU_ROW_REMAP_PENDING)",
        "gpu-su01-h02: port counters grew or could not be read: mlx5_5 port 1 NIC_SYMBOL_ERROR_RATE",
        "gpu-su01-h03: no burn-in report",
        "gpu-su01-h04: lifecycle state quarantine in NetBox (needs burn_in)",
        "gpu-su01-h04: ib_pairwise did not run: its links were never exercised",
        "su01: the multi-node all-reduce did not include gpu-su01-h03, gpu-su01-h04",
        "su01: multi-node all-reduce FAIL (NCCL_BUSBW_LOW)",
    ]


def test_no_su_result_and_no_nodes_block() -> None:
    q = qualify_su(2, NODES, {n: report() for n in NODES}, None, BURNING, PROFILE)
    assert q.blockers == ["su02: no multi-node all-reduce result (su02.nccl-multi.json)"]
    assert qualify_su(3, [], {}, SU, {}, PROFILE).blockers == ["su03: the fabric has no nodes in this SU"]


def test_counter_codes_follow_the_profile() -> None:
    codes = counter_codes(PROFILE)
    assert {"NIC_LINK_DOWNED", "NIC_SYMBOL_ERROR_RATE", "IB_COUNTER_SATURATED", "NIC_COUNTER_UNKNOWN"} <= codes
    assert "NIC_PORT_DOWN" not in codes  # a down port is a burn-in FAIL, not counter growth
