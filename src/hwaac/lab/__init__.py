"""The twin: a rendered fabric in Linux network namespaces (FRR and lldpd per switch, hosts from their files).

``hwaac lab up|down|status|converge|exec|fail|restore`` (see :mod:`hwaac.lab.cli`); docs/lab.md says what it
proves and what it cannot. Verify collectors, the Ansible path and the deploy use :class:`Lab`:
``Lab.load("demo").run(device, argv)`` runs ``argv`` in the device's namespace with ``vtysh`` and ``lldpcli``
wrappers on ``PATH`` that reach that device's daemons (docs/lab.md "In Python: hwaac.lab.Lab").
"""

from hwaac.lab.api import Device, Lab
from hwaac.lab.errors import LabError, LabNotUp

__all__ = ["Device", "Lab", "LabError", "LabNotUp"]
