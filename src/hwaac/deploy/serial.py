"""A rolling play's batch size, as Ansible's ``serial`` keyword takes it, and the batches ansible-playbook cuts.

One grammar for ``hwaac deploy --batch-size``, ``hwaac lab deploy --serial`` and ``hwaac review --batch-size``:
a whole number of hosts from 1, or a whole share from 1% to 100%. The arithmetic is ansible-core's (2.21:
``lib/ansible/utils/helpers.py`` ``pct_to_int``, ``lib/ansible/executor/playbook_executor.py``
``PlaybookExecutor._get_serialized_batches``), without importing it. Details: docs/deploy.md, "Batch sizes".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BATCH_SIZE = re.compile(r"[1-9][0-9]*|(?:[1-9][0-9]?|100)%")


class BatchSizeError(ValueError):
    """A batch size hwaac does not take; the message names the option, the value and what is valid."""


def valid(hosts: str = "hosts", share_of: str = "the play's hosts") -> str:
    """What a batch size may be, in the words of the option: ``hosts`` counted, a share of ``share_of``."""
    return f"a number of {hosts} (e.g. 2) or a share of {share_of} (1% to 100%, e.g. 25%)"


def parse_batch_size(value: str, option: str, hosts: str = "hosts", share_of: str = "the play's hosts") -> str:
    """``value`` without surrounding blanks, when it is a batch size hwaac takes (see the module docstring).

    Raises:
        BatchSizeError: naming ``option`` (``--batch-size``), the value and what is valid.
    """
    size = value.strip()
    if not _BATCH_SIZE.fullmatch(size):
        raise BatchSizeError(f"{option} {value!r} is not valid: {valid(hosts, share_of)}")
    return size


def batch_size(serial: str | int, hosts: int) -> int:
    """ansible-core's ``pct_to_int``: a share (``"25%"``) of ``hosts`` rounded down, at least 1; else the number."""
    if isinstance(serial, str) and serial.endswith("%"):
        return int((int(serial.replace("%", "")) / 100.0) * hosts) or 1
    return int(serial)


def batch_sizes(serial: Sequence[str | int], hosts: int) -> list[int]:
    """The sizes of the batches ansible-playbook cuts ``hosts`` hosts into for a play's ``serial`` list
    (``_get_serialized_batches``): each item a number or a share of all the play's hosts, the last one repeated;
    none, or an item under 1, is one batch of every host left."""
    sizes: list[int] = []
    items = list(serial) or [-1]
    left, k = hosts, 0
    while left > 0:
        size = batch_size(items[k], hosts)
        if size <= 0:
            sizes.append(left)
            break
        sizes.append(min(size, left))
        left -= size
        k = min(k + 1, len(items) - 1)
    return sizes


def batches(hosts: Sequence[str], serial: str | int) -> list[list[str]]:
    """``hosts`` (in the play's order) cut into the batches of ``serial``, as ansible-playbook runs them."""
    out: list[list[str]] = []
    start = 0
    for size in batch_sizes([serial], len(hosts)):
        out.append(list(hosts[start : start + size]))
        start += size
    return out
