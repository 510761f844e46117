"""``hwaac deploy``'s arguments: a playbook by name or path, the serial variables --batch-size sets, and bad input
refused with exit 2 and a message naming the argument, its value and what is valid, before anything runs or any
folder is made. The artifacts copy masks the environment's secrets and keeps only ansible's settings of the
environment ansible-runner records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hwaac.cli import main
from hwaac.deploy import playbooks
from hwaac.deploy.artifacts import MASK, copy_artifacts, secrets
from hwaac.deploy.request import build_request, extra_var_secrets

REPO = Path(__file__).resolve().parents[3]
INVENTORY = REPO / "inventory" / "demo" / "simulated"


def test_a_playbook_by_name_or_path_and_its_batch_variables(tmp_path: Path) -> None:
    assert (
        playbooks.resolve("fabric_deploy")
        == playbooks.resolve("fabric_deploy.yml")
        == REPO / "playbooks" / "fabric_deploy.yml"
    )
    own = tmp_path / "mine.yml"
    own.write_text("- hosts: all\n  serial: \"{{ my_serial | default(1) }}\"\n  tasks: []\n")
    assert playbooks.resolve(str(own)) == own
    # site.yml imports the three rolling playbooks
    assert playbooks.serial_variables(playbooks.resolve("site")) == [
        "fabric_deploy_serial",
        "hosts_network_serial",
        "lustre_clients_serial",
    ]
    req = build_request(
        str(own),
        batch_size="25%",
        artifacts=str(tmp_path / "a"),
        check=True,
        limit="h1",
        inventories=[str(INVENTORY), "h1,h2,"],
        extra_vars=["a=1 b=2", '{"c": [1]}', f"@{own}"],
    )
    assert req.batch_vars == {"my_serial": "25%"}
    assert req.inventories == [str(INVENTORY), "h1,h2,"]
    assert req.extra_args == ["-e", "a=1 b=2", "-e", '{"c": [1]}', "-e", f"@{own}"]
    assert not (tmp_path / "a").exists()  # made by the run, not by the request


# arguments after PLAYBOOK -> what the message must name
BAD = [
    (["no_such_playbook"], ["PLAYBOOK 'no_such_playbook'", "valid names:", "fabric_deploy", "site", "verify"]),
    (["fabric_deploy", "--batch-size", "0"], ["--batch-size '0' is not valid", "25%"]),
    (["fabric_deploy", "--batch-size", "101%"], ["--batch-size '101%' is not valid"]),
    (["verify", "--batch-size", "2"], ["--batch-size: no play of verify.yml", "fabric_deploy, hosts_network"]),
    (["site", "-e", "justaword"], ["-e 'justaword': not KEY=VALUE", "@FILE"]),
    (["site", "-e", "{broken: [}"], ["-e '{broken: [}': not valid YAML/JSON"]),
    (["site", "-e", "[1, 2]"], ["-e '[1, 2]': inline variables must be a mapping"]),
    (["site", "-e", "@/no/such/vars.yml"], ["-e '@/no/such/vars.yml': no such file /no/such/vars.yml"]),
    (["site", "-i", "/no/such/inventory"], ["-i '/no/such/inventory': no such inventory file or folder"]),
    (["site", "--limit", " "], ["--limit ' ': empty"]),
]


@pytest.mark.parametrize(("args", "said"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_naming_it_and_runs_nothing(
    args: list[str], said: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    artifacts = tmp_path / "artifacts"
    assert main(["deploy", *args, "--artifacts", str(artifacts)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwaac deploy: ")
    for text in said:
        assert text in err
    assert not artifacts.exists()


def test_the_default_artifacts_folder_is_named_by_time_and_playbook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    req = build_request("fabric_deploy")
    assert req.artifacts.parent == tmp_path / "build" / "deploy"
    assert re.fullmatch(r"\d{8}T\d{6}-fabric_deploy", req.artifacts.name)


def test_an_artifacts_folder_in_use_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "stdout").write_text("an earlier run")
    assert main(["deploy", "site", "--artifacts", str(used)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert [p.name for p in used.iterdir()] == ["stdout"]
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert main(["deploy", "site", "--artifacts", str(blocked / "run")]) == 2
    assert f"cannot be made in {blocked} (not a writable folder)" in capsys.readouterr().err


def test_the_artifacts_copy_masks_secrets_and_keeps_only_ansibles_environment(tmp_path: Path) -> None:
    token = "0123456789abcdef0123456789abcdef01234567"
    hidden = secrets({"NETBOX_TOKEN": token, "HOME": "/root", "VAULT_PASSWORD": "pa\"ss", "SHORT_TOKEN": "ab"})
    assert hidden == {"NETBOX_TOKEN": token, "VAULT_PASSWORD": "pa\"ss"}
    run = tmp_path / "run"
    (run / "job_events").mkdir(parents=True)
    (run / "stdout").write_text(f"token={token}\n")
    (run / "job_events" / "1-x.json").write_text(json.dumps({"stdout": f"{token} and pa\"ss"}))
    (run / "command").write_text(
        json.dumps(
            {
                "command": ["ansible-playbook", "site.yml"],
                "cwd": "/w",
                "env": {"NETBOX_TOKEN": token, "HOME": "/root", "PATH": "/bin", "ANSIBLE_NOCOLOR": "1"},
            }
        )
    )
    (run / "env.list").write_text(f"NETBOX_TOKEN={token}\n")
    dest = tmp_path / "artifacts"
    masked = copy_artifacts(run, dest, hidden, {"status": "successful", "echo": token})
    assert masked == {"NETBOX_TOKEN": 2, "VAULT_PASSWORD": 1}
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["command", "job_events/1-x.json", "stdout", "summary.json"]
    for path in dest.rglob("*"):
        if path.is_file():
            assert token not in path.read_text() and "pa\\\"ss" not in path.read_text(), path
    assert (dest / "stdout").read_text() == f"token={MASK}\n"
    assert json.loads((dest / "command").read_text())["env"] == {"ANSIBLE_NOCOLOR": "1", "PATH": "/bin"}
    summary = json.loads((dest / "summary.json").read_text())
    assert summary["echo"] == MASK and summary["masked"] == masked
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left


@pytest.mark.parametrize(
    ("extra", "found"),
    [
        (["-e", "netbox_token=s3cret-value"], {"-e netbox_token": "s3cret-value"}),
        (["-e", "a=1 db_password='p w d!'"], {"-e db_password": "p w d!"}),
        (["-e", '{"api_key": "k-123456", "batch": 4}'], {"-e api_key": "k-123456"}),
        (["-e", "fabric_deploy_serial=25%", "-e", "token=abc"], {}),  # too short to mask ordinary text
        (["-e", "tokenizer_path=/opt/x"], {"-e tokenizer_path": "/opt/x"}),  # the name decides, as for the environment
    ],
)
def test_extra_var_secrets(extra: list[str], found: dict[str, str]) -> None:
    assert extra_var_secrets(extra) == found


def test_extra_var_secrets_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "vars.yml").write_text("netbox_token: nbt_abc.def\nswitch_config_dir: /x\n")
    assert extra_var_secrets(["-e", f"@{tmp_path / 'vars.yml'}"]) == {"-e netbox_token": "nbt_abc.def"}


def test_a_playbook_ansible_refuses_is_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ansible-playbook stops before any task (here: a module that does not exist): the run fails (1) and says
    ansible's own reason, not only its exit code."""
    (tmp_path / "bad.yml").write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: Nothing\n      bogus.module.nope: {}\n"
    )
    rc = main(["deploy", str(tmp_path / "bad.yml"), "-i", "localhost,", "--artifacts", str(tmp_path / "out")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "hwaac deploy: ansible-playbook: [ERROR]: couldn't resolve module/action 'bogus.module.nope'" in err
