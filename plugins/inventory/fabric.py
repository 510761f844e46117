# Copyright: hwaac maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
name: fabric
short_description: Hosts and groups of an hwaac fabric, from NetBox or from a plan file
description:
  - Builds the inventory of one fabric planned by hwaac - its switches and GPU nodes - either from the C(plan.json)
    that C(hwaac plan) writes, or from NetBox, where C(terraform apply) or C(hwaac netbox sync) recorded it.
  - From NetBox, the intent's plan is read back with the ASNs, loopbacks and link addresses NetBox holds (a value
    corrected in NetBox wins), plus each device's status and primary IPv4 address (C(ansible_host)). The reads are
    a bounded number of requests per object type (pages of 1000 objects), never one per device.
  - "Groups: C(fabric_<name>) with children C(switches) (C(leaf), C(spine), C(super_spine)) and C(gpu_nodes);
    C(plane<P>) (a plane's switches and the nodes cabled to it); C(rail<R>) (the leaves of a rail); C(su<SS>) (an
    SU's leaves and nodes); C(pod<N>) in 3-tier designs."
  - "Host variables, prefixed C(hwaac_): C(fabric), C(role), C(source), C(plane), C(model), C(asn), C(loopback),
    C(su), C(rail), C(pod) (switches); C(su), C(slot), C(rails), C(planes) (nodes); C(files) (the host's rendered
    files, when O(render_dir) is set); C(status) (from NetBox)."
  - The inventory file name must end in C(.hwaac.yml) or C(.hwaac.yaml).
author: hwaac maintainers (@aiinfra)
version_added: 0.1.0
requirements:
  - the hwaac Python package on the controller (it is this collection's Python core)
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin; it marks the file as this plugin's source.
    required: true
    type: str
    choices: [aiinfra.hwaac.fabric]
  source:
    description:
      - Where the fabric comes from. V(plan) reads O(plan_file); V(netbox) plans O(intent) and reads it back from
        NetBox.
    type: str
    choices: [plan, netbox]
    default: plan
  plan_file:
    description:
      - The C(plan.json) written by C(hwaac plan), or the output folder holding it. Relative paths are relative to
        the inventory file's folder. Required with O(source=plan).
    type: str
  intent:
    description:
      - The fabric's intent (C(fabric.yml), or its folder). Relative paths are relative to the inventory file's
        folder. Required with O(source=netbox).
    type: str
  netbox_url:
    description:
      - The NetBox URL. Without it (and without E(NETBOX_URL)), the local NetBox started by C(hwaac netbox up).
    type: str
    env:
      - name: NETBOX_URL
  netbox_token:
    description:
      - The NetBox API token. It is never printed; prefer the environment over the inventory file.
    type: str
    env:
      - name: NETBOX_TOKEN
  render_dir:
    description:
      - The folder holding the fabric's rendered files (written by C(hwaac plan) or C(hwaac netbox render)); sets
        C(hwaac_files) on every host. Relative paths are relative to the inventory file's folder.
    type: str
"""

EXAMPLES = r"""
# demo.hwaac.yml - the demo fabric from the plan written by `hwaac plan inventory/demo -o build/demo`
plugin: aiinfra.hwaac.fabric
source: plan
plan_file: ../../build/demo
render_dir: ../../build/demo

---
# netbox.hwaac.yml - the same fabric as NetBox holds it (NETBOX_URL and NETBOX_TOKEN from the environment),
# cached for an hour, with an extra group per switch model
plugin: aiinfra.hwaac.fabric
source: netbox
intent: fabric.yml
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/hwaac-inventory
cache_timeout: 3600
keyed_groups:
  - key: hwaac_model | default('none')
    prefix: model
"""

import os  # noqa: E402

from ansible.errors import AnsibleParserError  # noqa: E402
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable  # noqa: E402

try:
    from hwaac.inventory import FabricInventory, from_netbox, from_plan_file

    HAS_HWAAC = True
except ImportError:  # reported in parse(), so that ansible-doc still works without it
    HAS_HWAAC = False


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "aiinfra.hwaac.fabric"

    def verify_file(self, path):
        return super().verify_file(path) and path.endswith((".hwaac.yml", ".hwaac.yaml"))

    def _path(self, option, base):
        value = self.get_option(option)
        if not value:
            return None
        value = os.path.expanduser(value)
        return value if os.path.isabs(value) else os.path.normpath(os.path.join(base, value))

    def _load(self, base):
        render_dir = self._path("render_dir", base)
        if self.get_option("source") == "plan":
            plan_file = self._path("plan_file", base)
            if not plan_file:
                raise AnsibleParserError(
                    "aiinfra.hwaac.fabric: source=plan needs plan_file (the plan.json of "
                    "`hwaac plan`, or its output folder)"
                )
            try:
                return from_plan_file(plan_file, render_dir=render_dir)
            except (OSError, ValueError) as exc:
                raise AnsibleParserError(f"aiinfra.hwaac.fabric: plan_file {plan_file}: {exc}") from None
        intent = self._path("intent", base)
        if not intent:
            raise AnsibleParserError("aiinfra.hwaac.fabric: source=netbox needs intent (the fabric's fabric.yml)")
        from hwaac.errors import IntentError
        from hwaac.netbox.connection import netbox_target
        from hwaac.netbox.errors import NetBoxError

        url, token = self.get_option("netbox_url"), self.get_option("netbox_token")
        try:
            if not (url and token):
                target = netbox_target(url)
                url, token = target.url, target.token
            return from_netbox(intent, url, token, render_dir=render_dir)
        except IntentError as exc:
            raise AnsibleParserError(f"aiinfra.hwaac.fabric: invalid intent: {exc}") from None
        except (NetBoxError, OSError) as exc:
            raise AnsibleParserError(f"aiinfra.hwaac.fabric: {str(exc).splitlines()[0]}") from None

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        if not HAS_HWAAC:
            raise AnsibleParserError("aiinfra.hwaac.fabric needs the hwaac Python package on the controller")
        self._read_config_data(path)
        key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        data = None
        if use_cache:
            try:
                data = self._cache[key]
            except KeyError:
                data = None
        if data is None:
            inv = self._load(os.path.dirname(os.path.abspath(path)))
            data = {
                "fabric": inv.fabric,
                "groups": inv.groups,
                "children": inv.children,
                "hostvars": inv.hostvars,
                "notes": inv.notes,
            }
            if self.get_option("cache"):
                self._cache[key] = data
        self._populate(FabricInventory(**data))

    def _populate(self, inv):
        for note in inv.notes[:20]:
            self.display.warning(f"aiinfra.hwaac.fabric: taken from NetBox: {note}")
        for group, hosts in inv.groups.items():
            self.inventory.add_group(group)
            for host in hosts:
                self.inventory.add_host(host, group=group)
        for parent, kids in inv.children.items():
            self.inventory.add_group(parent)
            for kid in kids:
                self.inventory.add_group(kid)
                self.inventory.add_child(parent, kid)
        strict = self.get_option("strict")
        for host, hostvars in inv.hostvars.items():
            self.inventory.add_host(host)
            for name, value in hostvars.items():
                self.inventory.set_variable(host, name, value)
            self._set_composite_vars(self.get_option("compose"), hostvars, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), hostvars, host, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), hostvars, host, strict=strict)
