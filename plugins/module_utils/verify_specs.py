# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Argument specs of aiinfra.hwaac.fabric_facts and fabric_verify, shared by their module files (documentation,
validate-modules) and their action plugins, as controller_specs.py does for the other action-backed modules."""

from __future__ import annotations

SPECS = {
    # the options of a playbook task; the host module also takes "commands" (COMMANDS_OPTION), set by the action
    "fabric_facts": {
        "plan": {"type": "path", "required": True},
        "checks": {"type": "list", "elements": "str"},
        "device": {"type": "str"},
        "dest": {"type": "path"},
        "netns": {"type": "str"},
        "timeout": {"type": "float", "default": 30.0},
        "parallel": {"type": "int", "default": 16},
        "return_outputs": {"type": "bool", "default": False},
    },
    "fabric_verify": {
        "plan": {"type": "path", "required": True},
        "facts": {"type": "path", "required": True},
        "report_dir": {"type": "path"},
        "formats": {
            "type": "list",
            "elements": "str",
            "default": ["json", "junit", "markdown"],
            "choices": ["json", "junit", "markdown", "table"],
        },
        "checks": {"type": "list", "elements": "str"},
        "devices": {"type": "list", "elements": "str"},
        "fail_on_fail": {"type": "bool", "default": True},
    },
}

COMMANDS_OPTION = {
    "commands": {
        "type": "list",
        "elements": "dict",
        "options": {
            "argv": {"type": "list", "elements": "str", "required": True},
        },
    },
}


def controller_only(name):
    """``main()`` of a module that only documents its action plugin: it declares the spec and says where it runs."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(argument_spec=SPECS[name], supports_check_mode=True)
    module.fail_json(msg=f"aiinfra.hwaac.{name} runs on the controller through its action plugin")
