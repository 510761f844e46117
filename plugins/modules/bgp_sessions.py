#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of aiinfra.hwaac.bgp_sessions: runs FRR's ``vtysh -c 'show bgp summary json'`` and returns its output.

The action plugin of the same name parses it on the controller (hwaac.apply.bgp) and retries.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bgp_sessions
short_description: Wait until a switch's BGP sessions are Established (health gate of a rolling push)
version_added: "0.1.0"
description:
  - Reads FRR's C(show bgp summary json) through C(vtysh) (on SONiC the host's C(vtysh) runs the one in the
    C(bgp) container) and checks that the expected neighbours are Established.
  - Retries O(retries) times, O(delay) seconds apart, and fails naming the neighbours still down and their state.
  - Read only; runs in check mode too.
  - The output is parsed on the controller by the action plugin (Python package C(hwaac)).
author:
  - hwaac maintainers (@aiinfra)
options:
  neighbors:
    description:
      - Neighbour addresses that must be Established, e.g. RV(aiinfra.hwaac.sonic_config_db#module:bgp_neighbors).
      - Default (unset) is every neighbour FRR reports.
    type: list
    elements: str
  vrf:
    description:
      - The VRF whose sessions are read.
    type: str
    default: default
  min_up:
    description:
      - Share of the expected neighbours (0 to 1) that must be Established. The first push of a fabric brings a
        leaf up before its spines are configured; a value below 1 lets such a batch pass.
    type: float
    default: 1.0
  retries:
    description:
      - How many more times to read the sessions after the first read while the gate does not pass.
    type: int
    default: 12
  delay:
    description:
      - Seconds between reads.
    type: float
    default: 5
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform,
                                 aiinfra.hwaac.controller_requirements]
attributes:
  check_mode:
    support: full
    details: Read only.
  diff_mode:
    support: none
  platform:
    platforms: [sonic, linux]
    support: full
    details: Any host with FRR's vtysh.
notes:
  - Needs the right to run C(vtysh) (root on SONiC; use C(become)).
seealso:
  - module: aiinfra.hwaac.sonic_config_db
"""

EXAMPLES = r"""
- name: Push the config
  aiinfra.hwaac.sonic_config_db:
    src: "build/plan/switches/{{ inventory_hostname }}/config_db.json"
  register: pushed
  become: true

- name: BGP sessions of the changed switch are up
  aiinfra.hwaac.bgp_sessions:
    neighbors: "{{ pushed.bgp_neighbors }}"
    retries: 24
    delay: 5
  when: pushed is changed
  become: true
"""

RETURN = r"""
configured:
  description: Number of neighbours that were expected.
  returned: always
  type: int
  sample: 32
established:
  description: Number of the expected neighbours that are Established.
  returned: always
  type: int
  sample: 32
down:
  description: Expected neighbours not Established, with their FSM state (V(missing) when FRR does not know them).
  returned: always
  type: dict
  sample: {"10.1.0.4": "Active"}
attempts:
  description: How many times the sessions were read.
  returned: always
  type: int
  sample: 1
router_id:
  description: FRR's BGP router id.
  returned: always
  type: str
  sample: 10.0.0.1
stdout:
  description: The last raw C(show bgp summary json) output.
  returned: always
  type: str
"""

# Ansible wants the imports below DOCUMENTATION/EXAMPLES/RETURN (validate-modules import-before-documentation)
from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_limited  # noqa: E402


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            neighbors=dict(type="list", elements="str"),
            vrf=dict(type="str", default="default"),
            min_up=dict(type="float", default=1.0),
            retries=dict(type="int", default=12),
            delay=dict(type="float", default=5),
        ),
        supports_check_mode=True,
    )
    vtysh = module.get_bin_path("vtysh", required=True)
    vrf = module.params["vrf"]
    command = "show bgp summary json" if vrf == "default" else f"show bgp vrf {vrf} summary json"
    rc, out, err = run_limited(module, [vtysh, "-c", command]).rc_out_err
    if rc != 0:
        module.fail_json(msg=f"vtysh -c '{command}' failed (rc {rc}): {(err or out).strip()}", stdout=out)
    # one read per call: the action plugin parses it and decides whether to read again
    module.exit_json(changed=False, stdout=out, cmd=f"vtysh -c '{command}'")


if __name__ == "__main__":
    main()
