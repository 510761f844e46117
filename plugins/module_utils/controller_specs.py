# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Argument specs of the controller-side modules (their action plugins validate with them; the module files, which
only document, declare the same so that the documentation and the spec cannot drift apart)."""

from __future__ import annotations

STATES = ["planned", "burn_in", "production", "quarantine", "rma", "returned"]

SPECS = {
    "node_lifecycle": {
        "transitions": {"type": "list", "elements": "dict", "options": {
            "name": {"type": "str", "required": True},
            "to": {"type": "str", "required": True, "choices": STATES},
            "reason": {"type": "str", "required": True},
            "evidence": {"type": "dict"},
            "via": {"type": "str", "choices": STATES},
        }},
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
    "rma_report": {
        "node": {"type": "str"},
        "dest": {"type": "path", "required": True},
        "netbox_url": {"type": "str"},
        "netbox_token": {"type": "str", "no_log": True},
    },
}
