"""One batch-size grammar for ``hwaac deploy --batch-size``, ``hwaac lab deploy --serial`` and ``hwaac review
--batch-size``, and batches cut with ansible-core's own arithmetic (checked against ansible-core itself)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ansible.executor.playbook_executor import PlaybookExecutor
from ansible.utils.helpers import pct_to_int

from hwaac.cli import main
from hwaac.deploy.errors import DeployUsageError
from hwaac.deploy.playbooks import PLAYBOOKS, batch_size_vars
from hwaac.deploy.serial import BatchSizeError, batch_size, batch_sizes, batches, parse_batch_size
from hwaac.lab.api import Lab
from hwaac.lab.deploy import batches as lab_batches
from hwaac.lab.deploy import parse_serial
from hwaac.lab.errors import LabError


def ansible_batches(serial: list[Any], hosts: list[str]) -> list[list[str]]:
    """The batches ansible-playbook runs (PlaybookExecutor._get_serialized_batches) over ``hosts``."""
    executor = SimpleNamespace(_inventory=SimpleNamespace(get_hosts=lambda pattern, order=None: list(hosts)))
    play = SimpleNamespace(hosts="all", order=None, serial=serial)
    return PlaybookExecutor._get_serialized_batches(executor, play)


def test_a_share_of_any_number_of_hosts_is_pct_to_int() -> None:
    """Every share hwaac takes, over 0 to 300 hosts: float arithmetic and all (58% of 50 is 28, not 29)."""
    for hosts in range(301):
        for pct in range(1, 101):
            assert batch_size(f"{pct}%", hosts) == pct_to_int(f"{pct}%", hosts), (pct, hosts)
    assert batch_size("58%", 50) == 28


# a play's serial (as it holds it after templating) and its host count
SERIALS = [
    ([], 5),
    ([2], 5),
    (["25%"], 10),
    ([1, 2, "50%"], 10),
    (["1%"], 3),
    ([0], 3),
    ([10], 3),
    (["30%"], 7),
    (["58%"], 50),
    (["3"], 8),
    (["100%"], 4),
    ([1], 0),
]


@pytest.mark.parametrize(("serial", "hosts"), SERIALS)
def test_the_batches_are_the_ones_ansible_playbook_runs(serial: list[Any], hosts: int) -> None:
    names = [f"h{i:03d}" for i in range(hosts)]
    expected = ansible_batches(serial, names)
    assert batch_sizes(serial, hosts) == [len(b) for b in expected]
    if len(serial) == 1:
        assert batches(names, serial[0]) == expected


# what a user types -> the batch size hwaac passes on
GOOD = [("1", "1"), ("250", "250"), (" 25% ", "25%"), ("1%", "1%"), ("100%", "100%")]
# Ansible runs 0, 0% and 150% (all at once, 1 host, every host) but a rollout must not; 12.5% Ansible refuses
BAD = ["0", "0%", "101%", "150%", "12.5%", "-1", "+2", "05", "2.0", "x", "", "25 %", "\u0663"]


@pytest.mark.parametrize(("value", "size"), GOOD)
def test_batch_sizes_taken(value: str, size: str) -> None:
    assert parse_batch_size(value, "--batch-size") == size


def review_batch_size(value: str) -> None:
    """``hwaac review --batch-size value``: the batch size is checked before the intent is read (here: none)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        main(["review", "/no/such/fabric", "--old", "/no/such/old", "-o", "/no/such/out", "--batch-size", value])
    if "--batch-size" in err.getvalue():
        raise BatchSizeError(err.getvalue())


# entry point: (call with a value, the error it raises, the option its message names)
ENTRIES: dict[str, tuple[Callable[[str], Any], type[Exception], str]] = {
    "hwaac deploy": (lambda v: batch_size_vars(PLAYBOOKS / "fabric_deploy.yml", v), DeployUsageError, "--batch-size"),
    "hwaac lab deploy": (parse_serial, LabError, "--serial"),
    "hwaac review": (review_batch_size, BatchSizeError, "--batch-size"),
    "the helper": (lambda v: parse_batch_size(v, "--batch-size"), BatchSizeError, "--batch-size"),
}


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_every_batch_size_option_refuses_the_same_values(entry: str, value: str) -> None:
    call, error, option = ENTRIES[entry]
    with pytest.raises(error) as exc:
        call(value)
    assert f"{option} {value!r} is not valid: a number of " in str(exc.value)
    assert "(1% to 100%, e.g. 25%)" in str(exc.value)


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_every_batch_size_option_takes_the_same_values(entry: str) -> None:
    call, _error, _option = ENTRIES[entry]
    for value, _size in GOOD:
        call(value)


def test_the_lab_cuts_each_tier_as_ansible_would(tmp_path: Path) -> None:
    leaves = [f"leaf-{i:02d}" for i in range(50)]
    lab = Lab(
        tmp_path,
        {
            "name": "t",
            "links": {},
            "devices": {n: {"kind": "switch", "role": "leaf", "netns": f"hwl-t-{n}"} for n in leaves},
        },
    )
    assert lab_batches(lab, "58%") == ansible_batches(["58%"], leaves)
    assert [len(b) for b in lab_batches(lab, "58%")] == [28, 22]
