"""Ansible callback plugin: one line per ``serial`` batch of a play, for ``hwaac deploy``'s progress.

ansible-core announces each batch of a play with ``v2_playbook_on_play_start`` but names neither its hosts nor the
number of batches; this plugin prints ``hwaac-batch {json}`` (batch number, batch count, the batch's hosts) right
after the announcement, where ansible-runner keeps it as a ``verbose`` event of the play.
"""

from __future__ import annotations

import json
from typing import Any

from ansible.plugins.callback import CallbackBase

# hwaac deploy runs the ansible-playbook of its own environment (runner.run_env), where hwaac is importable
from hwaac.deploy.serial import batch_sizes

DOCUMENTATION = r"""
name: hwaac_batches
type: aggregate
short_description: print the hosts and the number of each serial batch of a play
description:
  - After each play start (one per C(serial) batch), prints one line C(hwaac-batch {json}) with the play's name,
    the batch's number and hosts, the number of batches and their sizes, computed from the play's C(serial) the
    way ansible-playbook cuts its batches; the first batch's line also names every host of the play.
  - Used by C(hwaac deploy), which adds its folder to C(ANSIBLE_CALLBACK_PLUGINS); loaded without being enabled.
author: hwaac
"""

MARKER = "hwaac-batch "


class CallbackModule(CallbackBase):
    """Prints ``hwaac-batch {json}`` after every play start."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "hwaac_batches"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self) -> None:
        super().__init__()
        self._started: dict[str, int] = {}

    def v2_playbook_on_play_start(self, play: Any) -> None:
        # ansible-runner's callback runs first and marks a repeated play (the next batch) as "<uuid>_<n>"
        key = str(getattr(play, "_uuid", "")).split("_")[0]
        self._started[key] = self._started.get(key, 0) + 1
        manager = play.get_variable_manager()
        if manager is None:
            return
        names = manager.get_vars(play=play)
        every = list(names.get("ansible_play_hosts_all", []))
        # no host matched: ansible announces the play once, with no batch restriction in force
        batch = list(names.get("ansible_play_batch", [])) if every else []
        sizes = batch_sizes(list(play.serial or []), len(every))
        if every and not batch and len(sizes) == 1:
            batch = every  # the implicit localhost, which the batch (hosts of "all") leaves out
        line = {
            "play": play.get_name(),
            "batch": self._started[key] if sizes else 0,
            "batches": len(sizes),
            "hosts": batch,
            "sizes": sizes,
        }
        if self._started[key] == 1:
            line["play_hosts"] = every  # once per play: the hosts that later batches will take
        self._display.display(MARKER + json.dumps(line))
