# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Argument specs of aiinfra.hwaac.network_telemetry (host) and network_health (controller), shared by their module
files (documentation, validate-modules) and the action plugin, as verify_specs.py does for fabric_facts."""

from __future__ import annotations

from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_tools import DEFAULT_PROBE_FILE

# plugins/doc_fragments/command_limits.py documents these two
COMMAND_LIMITS = {
    "timeout": {"type": "float", "default": 60.0},
    "max_output": {"type": "int", "default": 64 * 1024 * 1024},
}

FAIL_ON = ["fault", "warn", "never"]

SPECS = {
    "network_telemetry": {
        "kind": {"type": "str", "default": "sonic", "choices": ["sonic", "host"]},
        "tools": {"type": "list", "elements": "str"},
        "ports": {"type": "list", "elements": "str", "default": []},
        "device": {"type": "str"},
        "render_dir": {"type": "path"},
        "sysfs_root": {"type": "path", "default": "/sys"},
        "probes": {"type": "bool", "default": False},
        "probe_file": {"type": "path", "default": DEFAULT_PROBE_FILE},
        "filter": {"type": "bool", "default": True},
        **COMMAND_LIMITS,
    },
    "network_health": {
        "intent": {"type": "path", "required": True},
        "output_dir": {"type": "path", "required": True},
        "sweeps": {"type": "list", "elements": "dict"},
        "registered": {"type": "list", "elements": "str"},
        "hosts": {"type": "list", "elements": "str"},
        "slo": {"type": "path"},
        "squeue": {"type": "path"},
        "fail_on": {"type": "str", "default": "fault", "choices": FAIL_ON},
        "name": {"type": "str", "default": "network-health"},
        "probe_max_age": {"type": "float", "default": 900.0},
    },
}
