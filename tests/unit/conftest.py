"""Environment for tests that import cdktn (tests/unit/test_cdk.py).

It must be set here, at conftest import, before any test module imports cdktn: the first import starts jsii's node
child process, which keeps the environment it was started with (monkeypatch.setenv in a test is too late).
setdefault, so values set by the caller or CI win.
"""

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")  # node 20 works; jsii only warns
os.environ.setdefault("JSII_RUNTIME_PACKAGE_CACHE_ROOT", str(_REPO / "build" / "jsii-cache"))  # not ~/.cache
os.environ.setdefault("CHECKPOINT_DISABLE", "1")  # terraform, if a helper runs it, must not phone home


# The unit tests that took 14 s or more (pytest --durations=50 of tests/unit, 2 workers on the 2-core machine that
# six engineers' test runs shared, 26 min in all), then those of 10 s or more of what was left (12 min): marked
# slow, so `make unit` (-m "not slow") leaves them to `make test`, which runs every test. A test module's file name
# and a test function, all its parameters; or the file name and "*", every test of a module whose shared fixture
# is the slow part.
SLOW = frozenset(
    {
        "test_rail_check_role.py::*",
        "test_network_probe_role.py::*",
        "test_sonic_config_db.py::*",
        "test_sli_table.py::test_the_rules_on_the_columns_equal_their_plain_loops",
        "test_sli_table.py::test_aggregates_equal_the_object_aggregation",
        "test_lab_sonic_cli.py::test_gcu_decides_an_accepted_patch",
        "test_sonic_toolkit.py::test_gcu_dryrun_accepts_and_returns_the_resulting_config",
        "test_sonic_toolkit.py::test_gcu_dryrun_refuses_a_dangling_leafref_with_the_yang_error",
        "test_framed.py::test_a_node_s_ports_in_both_sweeps_are_one_rated_frame",
        "test_apply_sonic.py::test_inputs_are_not_modified",
        "test_apply_sonic.py::test_refuses_removing_or_changing_management_and_loopback0",
        "test_cdk.py::test_app_honours_hwaac_fabrics_and_rejects_unknown_names",
        "test_drain.py::test_every_step_is_accepted_and_bgpd_runs_what_it_means",
        "test_exporter_http.py::test_serves_metrics_rereads_samples_and_stops",
        "test_fake_config_gcu.py::test_a_dangling_leafref_is_refused_with_gcus_message_and_nothing_changes",
        "test_fake_config_gcu.py::test_an_accepted_patch_leaves_gcus_resulting_config",
        "test_fake_config_gcu.py::test_device_facts_come_from_sonic_version_yml",
        "test_fake_config_gcu.py::test_gcu_verdicts_are_kept_for_the_same_question",
        "test_fakes_nic.py::test_a_pair_that_fails_on_the_peers_dead_rail_is_unknown_here_and_fail_there",
        "test_framed.py::test_a_node_s_ports_not_rated_as_one_frame_judge_as_snapshots",
        "test_framed.py::test_frames_judge_as_snapshots",
        "test_lab_frr_config.py::test_every_demo_switch_shape_matches_sonic_render",
        "test_lab_frr_config.py::test_lab_timers_off_is_sonic_exactly",
        "test_lab_frr_config.py::test_rich_config_matches_sonic_render",
        "test_localise_screens.py::test_synthetic_fabric",
        "test_network_health_role.py::test_a_node_reads_the_rails_of_its_own_rendered_nic_roce",
        "test_network_health_role.py::test_with_probes_a_node_without_the_prober_is_not_read",
        "test_network_health_role.py::test_with_probes_a_nodes_latest_results_reach_the_report",
        "test_parallel.py::test_ends_correlated_on_the_reader_processes_judge_as_readings_correlated_here",
        "test_parallel.py::test_folders_read_on_two_processes_as_on_one",
        "test_parallel.py::test_outputs_read_on_two_processes_as_on_one",
        "test_parallel.py::test_probe_results_come_back_from_the_reader_processes",
        "test_parallel.py::test_results_are_consumed_here_in_job_order",
        "test_parallel.py::test_small_sweeps_one_core_and_threads_stay_serial",
        "test_probe_tomography.py::test_lossy_cables_are_named_and_nothing_else",
        "test_prometheus.py::test_promtool_unit_tests",
        "test_review.py::test_cli_exit_codes_and_files",
        "test_review.py::test_the_report_is_written_whole_or_not_at_all",
        "test_sli_table.py::test_columns_equal_the_objects",
        "test_sonic_toolkit.py::test_gcu_needs_device_facts_for_pfc_watchdog_changes",
        "test_sonic_validate.py::test_sonic_yang_agrees_on_every_case",
        "test_sonic_validate.py::test_validator_accepts_every_demo_switch",
        "test_verify_ansible.py::test_gather_then_judge",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if {f"{item.path.name}::{getattr(item, 'originalname', item.name)}", f"{item.path.name}::*"} & SLOW:
            item.add_marker(pytest.mark.slow)
