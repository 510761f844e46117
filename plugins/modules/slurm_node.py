#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.slurm_node: drain and resume Slurm nodes with reason ownership, idempotent."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: slurm_node
short_description: Drain and resume Slurm nodes, touching only the drains that hwaac owns
description:
  - Runs on the Slurm controller or a login host where C(scontrol) works (delegate the task there). Reads each node
    with C(scontrol show node -o NODE) and, only where needed, runs C(scontrol update NodeName=NODE State=DRAIN
    Reason=...) or C(scontrol update NodeName=NODE State=RESUME); then reads the node again and fails when the
    update did not take.
  - "B(Reason ownership.) hwaac's drain reasons start with C(hwaac:) (the module adds C(hwaac: ) in front of
    O(reason) when it is missing). A node that is drained, down or failed with any other reason (an
    administrator's, Slurm's own C(Not responding), LBNL NHC's C(NHC:), C(Reboot ASAP), or none) belongs to someone
    else. hwaac never overwrites such a reason and never resumes such a node; this is the rule of LBNL NHC's
    C(helpers/node-mark-online) with its C(NHC:) leader."
  - "O(state=drained): a node in service is drained with the hwaac reason (changed). A node drained by hwaac keeps
    its drain; its reason is updated when it differs (changed) and left alone when it is equal. A node drained or
    down by someone else is left as it is: not changed, RV(owner=other), its reason returned, and a warning."
  - "O(state=resumed): a node drained by hwaac is resumed (changed). A node in service is left alone. A node
    drained or down by someone else is not resumed: not changed, RV(owner=other), and a warning. A node with a
    pending reboot (C(REBOOT_REQUESTED), C(REBOOT_ISSUED), an old C(REBOOT) state or the C(@)/C(^) suffixes) is
    not resumed either, even when the drain is hwaac's, because a resume cancels the reboot (LBNL NHC's rule);
    RV(reboot_pending) and a warning say so."
  - A refusal is not a failure, so a play over many nodes goes on; look at RV(owner), RV(action) and the
    warnings, or fail the task yourself with C(failed_when) when a refusal must stop the play.
  - Several nodes are handled in one invocation with O(names) (one C(scontrol show node) and at most one
    C(scontrol update) per node). Every node is processed even when one fails; the task then fails with a message
    naming every failed node, and RV(nodes) still holds the result of each node.
  - Errors fail the task and name the node and the command - a node Slurm does not know (C(Node NAME not found)),
    a missing C(scontrol), a C(scontrol) that did not finish within O(timeout) seconds or could not reach
    slurmctld, and an update that C(scontrol) refused or that did not show in the node afterwards.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  name:
    description:
      - The Slurm node name (as in C(NodeName=)). One of O(name) and O(names) is required; they are mutually
        exclusive.
    type: str
  names:
    description:
      - Several Slurm node names, each handled as O(name). Hostlist expressions (C(node[01-04])) are not expanded;
        list every node. A node may be listed only once.
    type: list
    elements: str
  state:
    description:
      - C(drained) - out of service with the hwaac reason O(reason).
      - C(resumed) - back in service, for nodes whose drain is hwaac's.
    type: str
    required: true
    choices: [drained, resumed]
  reason:
    description:
      - "The drain reason, required with O(state=drained) and not used with O(state=resumed). C(hwaac: ) is put in
        front unless it already starts with C(hwaac:); for example C(GPU_XID_79 gpu 3 fell off the bus) is stored
        as C(hwaac: GPU_XID_79 gpu 3 fell off the bus). One line; the controller-side helper
        C(hwaac.health.lifecycle.slurm_reason) builds such reasons from fault codes."
    type: str
  scontrol:
    description: The C(scontrol) binary, looked up on C(PATH) unless a path is given.
    type: str
    default: scontrol
  timeout:
    description: Seconds each C(scontrol) call may take before the node fails (slurmctld not answering).
    type: int
    default: 30
notes:
  - Supports check mode (reads only; RV(action), RV(node_state_after) and RV(reason_after) predict the update,
    with the State Slurm prints after it, for example C(IDLE) -> C(IDLE+DRAIN), C(MIXED+DRAIN) -> C(MIXED),
    C(DOWN+DRAIN) -> C(IDLE)) and diff mode (before/after C(state) and C(reason); with O(names), per node).
  - Needs Slurm operator or administrator rights (C(scontrol update) as root or SlurmUser).
  - Slurm records who set a reason and when (C(Reason=TEXT [USER@TIME])); RV(reason) is the text without that
    marker, RV(reason_user) and RV(reason_time) hold the marker's parts.
seealso:
  - name: scontrol manual (update NodeName, State=DRAIN/RESUME)
    description: Slurm's node states and the update command.
    link: https://slurm.schedmd.com/scontrol.html
  - name: LBNL NHC node-mark-online
    description: The reason-ownership rule this module follows (resume only nodes whose reason you set).
    link: https://github.com/mej/nhc/blob/master/helpers/node-mark-online
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: Quarantine a node that failed burn-in
  aiinfra.hwaac.slurm_node:
    name: gpu-su01-h07
    state: drained
    reason: "GPU_ROW_REMAP_PENDING gpu 5, burn-in 2026-01-24"
  delegate_to: "{{ slurm_controller }}"

- name: Put nodes that passed the re-test back in service (someone else's drains stay)
  aiinfra.hwaac.slurm_node:
    names: "{{ passed_nodes }}"
    state: resumed
  delegate_to: "{{ slurm_controller }}"
  register: resumed

- name: Nodes hwaac may not resume (drained by someone else, or a reboot is pending)
  ansible.builtin.debug:
    msg: "{{ resumed.nodes | rejectattr('action', 'equalto', 'resume') | selectattr('owner', 'ne', 'none')
             | map(attribute='name') }}"

- name: Stop when an operator's drain blocks the node
  aiinfra.hwaac.slurm_node:
    name: gpu-su01-h07
    state: resumed
  delegate_to: "{{ slurm_controller }}"
  register: r
  failed_when: r.failed or (r.owner | default('')) == 'other'
"""

RETURN = r"""
name:
  description: The node.
  returned: when O(name) is given
  type: str
  sample: gpu-su01-h07
owner:
  description: Whose the node's drain is, as read before any update - C(none) (in service), C(hwaac) (drained,
    down or failed with a reason starting with C(hwaac:)) or C(other) (drained, down or failed with any other
    reason, or none).
  returned: when O(name) is given
  type: str
  sample: other
action:
  description: What the module did (in check mode, would do) - C(drain), C(update_reason), C(resume) or C(none).
  returned: when O(name) is given
  type: str
  sample: drain
message:
  description: Why the node was or was not changed, in words.
  returned: when O(name) is given
  type: str
node_state:
  description: The node's C(State=) as read before any update.
  returned: when O(name) is given
  type: str
  sample: IDLE+DRAIN
reason:
  description: The node's reason as read before any update, without the C([USER@TIME]) marker; empty when none.
  returned: when O(name) is given
  type: str
  sample: bad DIMM B2, ticket 4711
reason_user:
  description: Who set RV(reason), from its C([USER@TIME]) marker; empty when none.
  returned: when O(name) is given
  type: str
  sample: root
reason_time:
  description: When RV(reason) was set, from its C([USER@TIME]) marker, as Slurm prints it; empty when none.
  returned: when O(name) is given
  type: str
  sample: "2026-01-20T09:15:00"
reboot_pending:
  description: Whether the node has a pending reboot (C(REBOOT_REQUESTED), C(REBOOT_ISSUED), C(REBOOT), C(@), C(^)).
  returned: when O(name) is given
  type: bool
node_state_after:
  description: The node's C(State=) after the update as read again, or, in check mode, as predicted; RV(node_state)
    when nothing was done.
  returned: when O(name) is given
  type: str
  sample: IDLE+DRAIN
reason_after:
  description: The node's reason after the update (read again, or predicted in check mode), without the marker.
  returned: when O(name) is given
  type: str
  sample: "hwaac: GPU_ROW_REMAP_PENDING gpu 5, burn-in 2026-01-24"
raw:
  description: The scontrol commands run for the node, each with its output (C($ COMMAND) then stdout and stderr).
  returned: when O(name) is given
  type: list
  elements: str
nodes:
  description:
    - One result per node, in the order of O(names) (with O(name), the one node), each with the fields above and
      C(changed).
    - A node that failed has C(failed) true and C(msg), and only the fields known up to the failure.
  returned: always
  type: list
  elements: dict
  sample:
    - {"name": "gpu-node-04", "changed": false, "owner": "other", "action": "none", "node_state": "IDLE+DRAIN",
       "reason": "bad DIMM B2, ticket 4711", "reason_user": "root", "reason_time": "2026-01-20T09:15:00",
       "reboot_pending": false, "node_state_after": "IDLE+DRAIN", "reason_after": "bad DIMM B2, ticket 4711",
       "message": "gpu-node-04 is drained by someone else (reason 'bad DIMM B2, ticket 4711' set by root at
       2026-01-20T09:15:00); hwaac does not resume it", "raw": []}
failed_nodes:
  description: The nodes that failed, in order; the task failed.
  returned: on failure, when any node failed
  type: list
  elements: str
  sample: ["gpu-node-99"]
"""

import os
import shlex

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.slurm import (
    SlurmError,
    SlurmNode,
    find_node,
    hwaac_reason,
    not_found_in,
    predict_drained,
    predict_resumed,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_recorded


class NodeFailure(Exception):
    """One node could not be read or updated; ``msg`` names the node and the command."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


class NodeRun:
    """Read, decide, update and verify one node; every scontrol call is kept for ``raw``."""

    def __init__(self, module: AnsibleModule, scontrol: str, name: str, timeout: int) -> None:
        self.module = module
        self.scontrol = scontrol
        self.name = name
        self.timeout = timeout
        self.raw: list[str] = []
        self.result: dict = {"name": name, "changed": False}
        self.diff: dict = {}

    def run(self, args: list[str]) -> tuple[int, str, str, str]:
        """Run scontrol (killed after ``timeout`` seconds, recorded in ``raw``); ``(rc, stdout, stderr, command)``."""
        cmd = [self.scontrol, *args]
        shown = shlex.join(cmd)
        try:
            ran = run_recorded(
                self.module, cmd, self.raw, self.timeout, handle_exceptions=False, expand_user_and_vars=False
            )  # a reason may hold $ or ~; scontrol gets it as written
        except OSError as exc:
            raise NodeFailure(f"cannot run {shown} for node {self.name}: {exc.strerror or exc}") from None
        if ran.timed_out:
            raise NodeFailure(
                f"{shown} did not finish within {self.timeout} s for node {self.name} (is slurmctld answering?)"
            )
        return ran.rc, ran.stdout, ran.stderr, shown

    def read(self) -> SlurmNode:
        rc, out, err, shown = self.run(["show", "node", "-o", self.name])
        missing = not_found_in(out)
        if missing:
            raise NodeFailure(
                f"node {self.name} not found by Slurm (scontrol: 'Node {missing} not found'; command: {shown})"
            )
        if rc != 0:
            detail = (err.strip() or out.strip() or "no output").splitlines()[-1]
            raise NodeFailure(f"{shown} failed for node {self.name} (rc={rc}): {detail}")
        try:
            return find_node(out, self.name)
        except SlurmError as exc:
            raise NodeFailure(f"cannot read node {self.name} from the output of {shown}: {exc}") from None

    def update(self, args: list[str]) -> None:
        rc, out, err, shown = self.run(["update", f"NodeName={self.name}", *args])
        if rc != 0:
            detail = (err.strip() or out.strip() or "no output").replace("\n", " ")
            raise NodeFailure(f"{shown} failed for node {self.name} (rc={rc}): {detail}")
        self.result["changed"] = True

    def apply(self, state: str, reason: str | None, check_mode: bool) -> dict:
        node = self.read()
        st = node.state
        owner = node.owner
        r = self.result
        r.update(
            owner=owner,
            node_state=st.raw,
            reason=node.reason,
            reason_user=node.reason_user,
            reason_time=node.reason_time,
            reboot_pending=st.reboot_pending,
            action="none",
        )
        after_state, after_reason = st.raw, node.reason
        command: list[str] = []  # the scontrol update arguments, when an update is due
        by_other = (
            f"{self.name} is {self._offline_word(node)} by someone else (reason {node.reason!r}"
            + (f" set by {node.reason_user} at {node.reason_time}" if node.reason_user else "")
            + ")"
        )
        if state == "drained":
            if owner == "none":
                r["action"] = "drain"
                r["message"] = f"{self.name} is in service ({st.raw}); drain it with the hwaac reason"
            elif owner == "hwaac" and node.reason == reason and st.drain:
                r["message"] = f"{self.name} is already drained by hwaac with this reason"
            elif owner == "hwaac":
                r["action"], r["message"] = "update_reason", f"{self.name} is drained by hwaac; update its reason"
            else:
                r["message"] = f"{by_other}; hwaac does not overwrite it"
                self.module.warn(r["message"])
            if r["action"] != "none":
                after_state, after_reason = predict_drained(st.raw), reason
                # in quotes: scontrol strips one leading and one trailing " from Reason= (update_node.c), so a reason
                # that ends in a quote is stored as written
                command = ["State=DRAIN", f'Reason="{reason}"']
        else:
            if owner == "none":
                r["message"] = f"{self.name} is in service ({st.raw}); nothing to resume"
            elif owner == "other":
                r["message"] = f"{by_other}; hwaac does not resume it"
                self.module.warn(r["message"])
            elif st.reboot_pending:
                r["message"] = (
                    f"{self.name} is drained by hwaac but a reboot is pending ({st.raw}); not resumed, because a "
                    "resume cancels the reboot (LBNL NHC node-mark-online rule)"
                )
                self.module.warn(r["message"])
            else:
                r["action"], r["message"] = "resume", f"{self.name} is drained by hwaac ({st.raw}); resume it"
                after_state, after_reason = predict_resumed(st.raw), ""
                command = ["State=RESUME"]
        if r["action"] != "none" and check_mode:
            r["changed"] = True
        elif r["action"] != "none":
            self.update(command)
            after = self.read()
            after_state, after_reason = after.state.raw, after.reason
            if state == "drained" and not (after.state.drain and after.reason == reason):
                raise NodeFailure(
                    f"scontrol accepted the drain of {self.name} but the node shows State={after.state.raw} "
                    f"Reason={after.reason!r} (wanted DRAIN with {reason!r})"
                )
            if state == "resumed" and (after.state.drain or after.state.fail):
                raise NodeFailure(
                    f"scontrol accepted the resume of {self.name} but the node still shows State={after.state.raw}"
                )
        r["node_state_after"], r["reason_after"] = after_state, after_reason
        self.diff = {
            "before": {"state": st.raw, "reason": node.reason},
            "after": {"state": after_state, "reason": after_reason},
        }
        r["raw"] = self.raw
        return r

    @staticmethod
    def _offline_word(node: SlurmNode) -> str:
        if node.state.drain:
            return "drained"
        return "down" if node.state.down else "failed"

    def failure(self, exc: NodeFailure) -> dict:
        return {**self.result, "failed": True, "msg": exc.msg, "raw": self.raw}


def check_name(name: str) -> str | None:
    """Why ``name`` cannot be a single Slurm node name, or ``None``."""
    if not name or not name.strip():
        return "empty node name"
    if any(c.isspace() for c in name) or any(c in name for c in "=,[]\"'"):
        return f"invalid node name {name!r} (one node per entry; hostlist expressions are not expanded)"
    return None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str"},
            "names": {"type": "list", "elements": "str"},
            "state": {"type": "str", "required": True, "choices": ["drained", "resumed"]},
            "reason": {"type": "str"},
            "scontrol": {"type": "str", "default": "scontrol"},
            "timeout": {"type": "int", "default": 30},
        },
        mutually_exclusive=[["name", "names"]],
        required_one_of=[["name", "names"]],
        required_if=[["state", "drained", ["reason"]]],
        supports_check_mode=True,
    )
    p = module.params
    single = p["names"] is None
    names = [p["name"]] if single else list(p["names"])
    if not names:
        module.fail_json(msg="names is empty")
    for name in names:
        problem = check_name(name)
        if problem:
            module.fail_json(msg=problem)
    seen = set()
    for name in names:
        if name in seen:
            module.fail_json(msg=f"node {name} is listed more than once in names")
        seen.add(name)
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout must be a positive number of seconds, got {p['timeout']}")
    reason = None
    if p["state"] == "drained":
        try:
            reason = hwaac_reason(p["reason"])
        except SlurmError as exc:
            module.fail_json(msg=str(exc))

    scontrol = p["scontrol"]
    if os.sep not in scontrol:
        scontrol = module.get_bin_path(scontrol) or scontrol  # a missing binary fails per node, naming the command

    results: list[dict] = []
    diffs: dict[str, dict] = {"before": {}, "after": {}}
    for name in names:
        run = NodeRun(module, scontrol, name, p["timeout"])
        try:
            results.append(run.apply(p["state"], reason, module.check_mode))
        except NodeFailure as exc:
            results.append(run.failure(exc))
        if run.diff:
            diffs["before"][name] = run.diff["before"]
            diffs["after"][name] = run.diff["after"]
    changed = any(r.get("changed") for r in results)
    failed = [r for r in results if r.get("failed")]
    if single:
        one = results[0]
        top = {k: v for k, v in one.items() if k not in ("failed", "msg", "changed")}
        diff = {"before": diffs["before"].get(names[0], {}), "after": diffs["after"].get(names[0], {})}
        if failed:
            module.fail_json(msg=one["msg"], changed=changed, nodes=results, failed_nodes=[names[0]], diff=diff, **top)
        module.exit_json(changed=changed, nodes=results, diff=diff, **top)
    if failed:
        module.fail_json(
            msg=f"slurm_node failed on {len(failed)} of {len(results)} nodes: " + "; ".join(r["msg"] for r in failed),
            changed=changed,
            nodes=results,
            failed_nodes=[r["name"] for r in failed],
            diff=diffs,
        )
    module.exit_json(changed=changed, nodes=results, diff=diffs)


if __name__ == "__main__":
    main()
