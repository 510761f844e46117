"""plugins/module_utils/host_files.py: the plumbing the Lustre host modules (lnet, lustre_mount, lustre_tune) share
- text files read and written atomically, and commands run with a time limit whose command lines, actions and
check-mode skips go into the result."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.host_files import (
    HostFileError,
    Steps,
    output_line,
    read_text,
    write_atomic,
)


class Failed(Exception):
    pass


class FakeModule:
    """The parts of AnsibleModule the helpers use; ``run_command`` runs for real (argv list, no shell)."""

    def __init__(self, check_mode: bool = False) -> None:
        self.check_mode = check_mode
        self.moved: list[tuple[str, str]] = []

    def fail_json(self, **kwargs: object) -> None:
        raise Failed(kwargs)

    def atomic_move(self, src: str, dest: str) -> None:
        self.moved.append((src, dest))
        os.rename(src, dest)

    def run_command(self, argv, before_communicate_callback=None, **_kwargs):
        import subprocess

        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if before_communicate_callback:
            before_communicate_callback(proc)
        out, err = proc.communicate()
        return proc.returncode, out, err


def test_read_text_missing_unreadable_and_not_utf8(tmp_path: Path) -> None:
    assert read_text(str(tmp_path / "nope")) == ""
    assert read_text(str(tmp_path / "nope"), missing=None) is None
    (tmp_path / "a").write_text("x=1\n")
    assert read_text(str(tmp_path / "a")) == "x=1\n"
    with pytest.raises(HostFileError, match=rf"^cannot read {tmp_path}: Is a directory$"):
        read_text(str(tmp_path))
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    with pytest.raises(HostFileError, match=rf"^cannot read {tmp_path}/bin: not UTF-8 text"):
        read_text(str(tmp_path / "bin"))


def test_write_atomic_new_file_in_a_new_directory_and_replacing(tmp_path: Path) -> None:
    module = FakeModule()
    path = tmp_path / "etc" / "lustre" / "mount.client.params"
    write_atomic(module, str(path), "a=1\n")
    assert path.read_text() == "a=1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    ((src, dest),) = module.moved
    assert dest == str(path) and Path(src).parent == path.parent and Path(src).name.startswith(".mount.client.params.")
    write_atomic(module, str(path), "a=2\n")
    assert path.read_text() == "a=2\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["mount.client.params"]  # no temporary file left


def test_write_atomic_failure_names_the_path_and_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HostFileError, match=rf"^cannot write {blocker}/x: "):
        write_atomic(FakeModule(), str(blocker / "x"), "y")

    class Refusing(FakeModule):
        def atomic_move(self, src: str, dest: str) -> None:
            raise OSError(13, "Permission denied")

    with pytest.raises(HostFileError, match=rf"^cannot write {tmp_path}/z: Permission denied"):
        write_atomic(Refusing(), str(tmp_path / "z"), "y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_steps_record_commands_skip_changes_in_check_mode_and_time_out() -> None:
    steps = Steps(FakeModule(check_mode=True), timeout=5, params=[])
    assert steps.result == {"changed": False, "actions": [], "commands": [], "params": []}
    res = steps.run([sys.executable, "-c", "print('read')"], changing=False)
    assert (res["rc"], res["stdout"]) == (0, "read\n")
    res = steps.run([sys.executable, "-c", "import sys; sys.exit(3)"], changing=True)
    assert res == {"rc": 0, "stdout": "", "stderr": ""}  # check mode: recorded, not run
    assert steps.result["commands"] == [
        f"{sys.executable} -c 'print('\"'\"'read'\"'\"')'",
        f"{sys.executable} -c 'import sys; sys.exit(3)'",
    ]
    steps.action("set_param")
    steps.action("set_param")
    assert steps.result["actions"] == ["set_param"] and steps.result["changed"] is True

    slow = Steps(FakeModule(), timeout=0.5)
    with pytest.raises(Failed) as failed:
        slow.run([sys.executable, "-c", "import time; time.sleep(30)"], changing=False)
    shown = f"{sys.executable} -c 'import time; time.sleep(30)'"
    assert failed.value.args[0]["msg"] == f"{shown} did not finish within 0.5 s"
    assert failed.value.args[0]["commands"] == [shown]
    with pytest.raises(Failed) as failed:
        slow.run(["/nonexistent/tool"], changing=False)
    assert failed.value.args[0]["msg"].startswith("cannot run /nonexistent/tool: ")


def test_steps_file_errors_fail_with_the_result(tmp_path: Path) -> None:
    steps = Steps(FakeModule(), timeout=5)
    steps.action("unit")
    with pytest.raises(Failed) as failed:
        steps.read_text(str(tmp_path))
    assert failed.value.args[0]["msg"] == f"cannot read {tmp_path}: Is a directory"
    assert failed.value.args[0]["actions"] == ["unit"]
    steps.write_text(str(tmp_path / "u"), "z\n")
    assert (tmp_path / "u").read_text() == "z\n" and steps.read_text(str(tmp_path / "u")) == "z\n"


def test_output_line() -> None:
    assert output_line({"rc": 1, "stdout": "out\n", "stderr": "error: a\nb\n"}) == "error: a / b"
    assert output_line({"rc": 1, "stdout": " out\n", "stderr": ""}) == "out"
    assert output_line({"rc": 2, "stdout": "", "stderr": ""}) == "exit 2"
    assert output_line({"rc": 2, "stdout": "", "stderr": ""}, empty="no output") == "no output"
