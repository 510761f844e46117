# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Argument specs of the modules with an action plugin, in one place: the action plugin validates the task with it
and the module file declares the same, so that documentation, action and module cannot drift apart."""

from __future__ import annotations

STATES = ["planned", "burn_in", "production", "quarantine", "rma", "returned"]

HEALTH_STAGES = ["quick", "dcgm", "single_node", "ib_serve", "ib_pairwise", "nccl_multi", "health"]

SPECS = {
    # the options of a playbook task; the host module also takes "probes" (PROBES_OPTION), set by the action plugin
    "node_health": {
        "stage": {"type": "str", "required": True, "choices": HEALTH_STAGES},
        "profile": {"type": "str", "default": "hgx-h200-8x400g"},
        "rails": {"type": "list", "elements": "str"},
        "peer": {"type": "str"},
        "mpi_hosts": {"type": "list", "elements": "str"},
        "nccl_algo": {"type": "str", "default": "RING"},
        "counters_before": {"type": "str"},
        "counters_age": {"type": "float"},
        "rdma_statistic_before": {"type": "str"},
        "sysfs_root": {"type": "str", "default": "/sys"},
        "timeout": {"type": "int"},
        "under_load": {"type": "bool", "default": False},
    },
    "node_lifecycle": {
        "transitions": {
            "type": "list",
            "elements": "dict",
            "options": {
                "name": {"type": "str", "required": True},
                "to": {"type": "str", "required": True, "choices": STATES},
                "reason": {"type": "str", "required": True},
                "evidence": {"type": "dict"},
                "via": {"type": "str", "choices": STATES},
            },
        },
        "names": {"type": "list", "elements": "str"},
        "to": {"type": "str", "choices": STATES},
        "reason": {"type": "str"},
        "evidence": {"type": "dict"},
        "query": {"type": "list", "elements": "str"},
        "fabric": {"type": "str"},
        "pool": {"type": "list", "elements": "str"},
        "max_share": {"type": "float", "default": 0.5},
        "window_seconds": {"type": "float", "default": 300},
        "enforce": {"type": "bool", "default": False},
        "netbox_url": {"type": "str"},
        "netbox_token": {"type": "str", "no_log": True},
    },
    "burn_in_report": {
        "stages": {"type": "dict", "required": True},
        "report_dir": {"type": "path"},
        "node": {"type": "str"},
        "profile": {"type": "str", "default": "hgx-h200-8x400g"},
        "interfaces": {"type": "dict"},
        "kind": {"type": "str", "default": "burn-in", "choices": ["burn-in", "health"]},
    },
    # the host module also takes "probes" (PROBES_OPTION), set by the action plugin; documented in its module file
    "lustre_health": {
        "filesystems": {"type": "list", "elements": "raw"},
        "mgs_nids": {"type": "list", "elements": "str"},
        "client_config": {"type": "path"},
        "proc_mounts": {"type": "path", "default": "/proc/mounts"},
        "lnet": {"type": "bool", "default": True},
        "list_nids": {"type": "bool", "default": True},
        "lfs_df": {"type": "bool", "default": False},
        "timeout": {"type": "int", "default": 60},
        "fail_on_fail": {"type": "bool", "default": False},
    },
    "rma_report": {
        "node": {"type": "str"},
        "dest": {"type": "path", "required": True},
        "netbox_url": {"type": "str"},
        "netbox_token": {"type": "str", "no_log": True},
    },
}

PROBES_OPTION = {"probes": {"type": "dict"}}


def probes_module(name):
    """The ``AnsibleModule`` of a host module that runs the probes its action plugin sends (``SPECS[name]`` and
    ``probes``), and those probes; fails the task when there are none (the module was called without its action
    plugin)."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(argument_spec={**SPECS[name], **PROBES_OPTION}, supports_check_mode=True)
    probes = module.params["probes"]
    if not probes:
        module.fail_json(
            msg=f"aiinfra.hwaac.{name}: no probes: this module runs through its action plugin "
            "(the controller needs the hwaac package)"
        )
    return module, probes


def controller_only(name, specs=None):
    """``main()`` of a module that only documents its action plugin: it declares the spec (from ``specs``, default
    this file's) and says where it runs."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(argument_spec=(SPECS if specs is None else specs)[name], supports_check_mode=True)
    module.fail_json(msg=f"aiinfra.hwaac.{name} runs on the controller through its action plugin")
