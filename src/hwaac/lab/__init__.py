"""The twin: a rendered fabric in Linux network namespaces (FRR and lldpd per switch, hosts from their files).

``hwaac lab up|down|status|converge|exec|fail|restore`` (see :mod:`hwaac.lab.cli`); docs/lab.md says what it
proves and what it cannot. Public API, for verify collectors, the Ansible path and the deploy::

    from hwaac.lab import Lab
    lab = Lab.load("demo")                  # or Lab.load() when one lab is up; LabNotUp when none
    lab.switches, lab.hosts                 # device name -> Device(name, kind, role, netns, ports)
    lab.run("leaf-p0-su01-r0", ["vtysh", "-c", "show bgp summary json"], timeout=30)  # CompletedProcess[str]
    lab.run("gpu-su01-h01", ["ip", "-j", "rule"])
    lab.env("leaf-p0-su01-r0")              # os.environ + PATH with the device's vtysh/lldpcli wrappers
    lab.vtysh_argv(dev), lab.lldpcli_argv(dev)  # the same daemons from outside the namespace

``run`` is ``ip netns exec <netns> argv`` with ``env(device)``; ``vtysh`` there is a wrapper for
``/usr/bin/vtysh --vty_socket /var/run/frr/<netns>`` (what ``-N <netns>`` reaches) and ``lldpcli`` one for
``/usr/sbin/lldpcli -u <lab>/dev/<device>/lldpd.socket``.
"""

from hwaac.lab.api import Device, Lab
from hwaac.lab.errors import LabError, LabNotUp

__all__ = ["Device", "Lab", "LabError", "LabNotUp"]
