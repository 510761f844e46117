"""AWX as code (docs/awx.md): every object of awx/objects/ accepted by its awx.awx module's recorded argument
spec (ArgumentSpecValidator) and by AWX's own rules (surveys, schedules, injectors), broken cases refused; a job
template per playbook; the configure playbook through ``ansible-playbook --syntax-check``; the execution
environment's build context from the real ``ansible-builder create``, offline."""

from __future__ import annotations

import ast
import copy
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from bindep.depends import Depends
from packaging.requirements import Requirement

from tests.integration.awx_controller import (
    CONFIGURE,
    OBJECT_FILES,
    OBJECT_LISTS,
    OBJECTS,
    inject,
    job_templates,
    launch_vars,
    load_objects,
    load_specs,
    module_objects,
    rrule_errors,
    spec_errors,
    survey_spec_errors,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EE = REPO / "awx" / "ee"
SPECS = load_specs()
OBJS = load_objects(hwaac_awx_netbox_url="https://netbox.example.net", hwaac_awx_netbox_token="0123456789abcdef")
JTS = job_templates(OBJS)
ROLLOUT = ["validate", "terraform", "deploy", "verify", "burn-in", "qualify"]


def test_the_specs_are_awx_awx_24_6_1_and_cover_every_module_the_playbook_uses() -> None:
    source = SPECS["source"]
    assert (source["version"], source["commit"]) == ("24.6.1", "94e5795dfc37b95c576d61f3e3b4e936c021548c")
    used = set(re.findall(r"^\s+(awx\.awx\.\w+):", CONFIGURE.read_text(), re.MULTILINE))
    assert used == set(SPECS["modules"]) == set(OBJECT_LISTS)


@pytest.mark.parametrize(
    ("module", "name", "params"),
    module_objects(OBJS),
    ids=[f"{m.split('.')[-1]}:{n}" for m, n, _ in module_objects(OBJS)],
)
def test_each_object_passes_its_module_argument_spec(module: str, name: str, params: dict[str, Any]) -> None:
    assert spec_errors(SPECS, module, params) == []


def _jt(**change: Any) -> dict[str, Any]:
    return {**copy.deepcopy(JTS["hwaac site"]), **change}


def _without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


_WF = OBJS["awx_workflow_job_templates"][0]
_CRED = OBJS["awx_credentials"][0]
BROKEN = [  # (case, module, params, what ArgumentSpecValidator says)
    ("unknown option", "awx.awx.job_template", _jt(playbok="playbooks/site.yml"), "playbok. Supported parameters"),
    ("wrong type", "awx.awx.job_template", _jt(forks="many"), "argument 'forks' is of type str and we were unable"),
    (
        "wrong type (dict)",
        "awx.awx.job_template",
        _jt(extra_vars=["x"]),
        "argument 'extra_vars' is of type list and we were unable to convert to dict",
    ),
    (
        "missing required",
        "awx.awx.credential",
        _without(_CRED, "credential_type"),
        "missing required arguments: credential_type",
    ),
    ("bad choice", "awx.awx.job_template", _jt(job_type="dry"), "value of job_type must be one of: run, check"),
    ("bad choice (verbosity)", "awx.awx.job_template", _jt(verbosity=9), "value of verbosity must be one of"),
    ("mutually exclusive", "awx.awx.credential", {**_CRED, "user": "admin"}, "mutually exclusive: organization|user"),
    (
        "workflow node without identifier",
        "awx.awx.workflow_job_template",
        {**_WF, "workflow_nodes": [_without(_WF["workflow_nodes"][0], "identifier")]},
        "workflow_nodes[0]: missing required arguments: identifier",
    ),
    (
        "workflow node, bad job type",
        "awx.awx.workflow_job_template",
        {**_WF, "workflow_nodes": [{**_WF["workflow_nodes"][0], "job_type": "dry"}]},
        "workflow_nodes[0]: value of job_type must be one of: run, check",
    ),
    ("schedule, unknown option", "awx.awx.schedule", {**OBJS["awx_schedules"][0], "every": "hour"}, "every"),
]


@pytest.mark.parametrize(("case", "module", "params", "says"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_object_is_refused(case: str, module: str, params: dict[str, Any], says: str) -> None:
    errors = spec_errors(SPECS, module, params)
    assert errors, case
    assert says in "; ".join(errors), errors


def _configure_tasks() -> list[dict[str, Any]]:
    (play,) = yaml.safe_load(CONFIGURE.read_text())
    return [t for t in play["tasks"] if any(k.startswith("awx.awx.") for k in t)]


def test_the_configure_playbook_passes_every_key_of_every_object_to_the_option_of_that_name() -> None:
    tasks = _configure_tasks()
    assert [next(k for k in t if k.startswith("awx.awx.")) for t in tasks] == list(OBJECT_LISTS)
    for task in tasks:
        module = next(k for k in task if k.startswith("awx.awx."))
        args = task[module]
        assert OBJECT_LISTS[module] in task["loop"], (module, task["loop"])
        # each option reads the item's key of its own name
        wrong = {opt: v for opt, v in args.items() if not re.fullmatch(rf"\{{\{{ item\.{opt}( \|.*)? \}}\}}", v)}
        assert wrong == {}, module
        assert set(args) <= set(SPECS["modules"][module]["argument_spec"]), module
        for _, name, params in (o for o in module_objects(OBJS) if o[0] == module):
            assert set(params) <= set(args), f"{module} {name}: keys the playbook drops: {set(params) - set(args)}"
    assert next(t for t in tasks if "awx.awx.credential" in t).get("no_log") is True  # the inputs hold the token


def _what_the_play_reads(playbook: Path) -> str:
    """The text of a playbook, the playbooks it imports and the defaults of the roles they run."""
    text = playbook.read_text()
    text += "".join(_what_the_play_reads(playbook.parent / p) for p in re.findall(r"import_playbook: (\S+)", text))
    roles = set(re.findall(r"role: aiinfra\.hwaac\.(\w+)", text))
    return text + "".join((REPO / "roles" / r / "defaults" / "main.yml").read_text() for r in sorted(roles))


def test_every_playbook_has_a_job_template_with_a_valid_survey() -> None:
    playbooks = {f"playbooks/{p.name}" for p in (REPO / "playbooks").glob("*.yml")} - {"playbooks/awx_configure.yml"}
    assert {jt["playbook"] for jt in JTS.values()} == playbooks
    for name, jt in JTS.items():
        assert survey_spec_errors(jt["survey_spec"]) == [], name
        assert jt["ask_job_type_on_launch"] is True, name  # check mode
        read = _what_the_play_reads(REPO / jt["playbook"]) + json.dumps(jt.get("extra_vars", {}))
        for q in jt["survey_spec"]["spec"]:
            assert re.search(rf"\b{q['variable']}\b", read), f"{name}: the playbook never reads {q['variable']}"


def test_the_verify_survey_offers_exactly_the_check_catalog() -> None:
    from hwaac.verify.checks import CATALOG

    (question,) = [q for q in JTS["hwaac verify"]["survey_spec"]["spec"] if q["variable"] == "verify_checks"]
    assert sorted(question["choices"]) == sorted(c.name for c in CATALOG)


def test_a_launch_takes_the_survey_defaults_and_refuses_bad_answers() -> None:
    site = JTS["hwaac site"]
    assert launch_vars(site)["fabric_deploy_serial"] == "25%"
    assert launch_vars(site, {"fabric_deploy_serial": "2"})["fabric_deploy_serial"] == "2"
    with pytest.raises(ValueError, match=r"fabric_deploy_render.*expected to be one of"):
        launch_vars(site, {"fabric_deploy_render": "git"})
    with pytest.raises(ValueError, match="not allowed on launch"):
        launch_vars(site, {"site_extra": 1})
    with pytest.raises(ValueError, match="expected to be an integer"):
        launch_vars(JTS["hwaac fabric deploy"], {"fabric_deploy_max_fail_percentage": "10"})
    with pytest.raises(ValueError, match="'rma_reason' value missing"):
        launch_vars(JTS["hwaac rma"], {"rma_hosts": "gpu-su01-h01"})
    # a multiselect default is only used when it is a list (AWX drops a newline string at launch)
    assert launch_vars(JTS["hwaac burn-in"])["burn_in_stages"] == [
        "quick",
        "dcgm",
        "single_node",
        "ib_pairwise",
        "nccl_multi",
    ]


BROKEN_SURVEYS = [  # (case, change to the site survey's first question, what AWX says)
    (
        "default not a choice",
        {"type": "multiplechoice", "choices": ["a", "b"], "default": "c"},
        "not one of the choices",
    ),
    ("integer default as text", {"type": "integer", "default": "5"}, "is not a integer value"),
    ("unknown type", {"type": "boolean"}, "is not one of text"),
    ("required not a bool", {"required": "yes"}, "'required' missing or not a bool"),
    ("choices missing", {"type": "multiselect", "default": []}, "needs choices"),
]


@pytest.mark.parametrize(("case", "change", "says"), BROKEN_SURVEYS, ids=[b[0] for b in BROKEN_SURVEYS])
def test_a_broken_survey_is_refused(case: str, change: dict[str, Any], says: str) -> None:
    spec = copy.deepcopy(JTS["hwaac site"]["survey_spec"])
    spec["spec"][0].update(change)
    assert says in "; ".join(survey_spec_errors(spec)), case


def test_a_duplicated_survey_variable_is_refused() -> None:
    spec = copy.deepcopy(JTS["hwaac site"]["survey_spec"])
    spec["spec"].append(spec["spec"][0])
    assert any("duplicated" in e for e in survey_spec_errors(spec))


def test_the_workflow_chains_the_rollout_and_its_survey_launches_every_node() -> None:
    (wf,) = OBJS["awx_workflow_job_templates"]
    assert survey_spec_errors(wf["survey_spec"]) == []
    nodes = {n["identifier"]: n for n in wf["workflow_nodes"]}
    chain, node = [], "validate"
    while node:
        chain.append(node)
        nxt = nodes[node].get("related", {}).get("success_nodes", [])
        node = nxt[0]["identifier"] if nxt else None
    assert chain == ROLLOUT
    assert [nodes[n]["unified_job_template"]["name"] for n in chain] == [
        "hwaac validate",
        "hwaac terraform apply",
        "hwaac site",
        "hwaac verify",
        "hwaac burn-in",
        "hwaac qualify",
    ]
    # the workflow's answers reach each node's job (AWX passes workflow extra vars to every job): every survey
    # variable of the workflow is a question of a node's template, and with them every node launches
    answers = {"qualify_sus": ["1"]}
    wf_vars = launch_vars(wf, answers)
    for n in chain:
        jt = JTS[nodes[n]["unified_job_template"]["name"]]
        asked = {q["variable"] for q in jt["survey_spec"]["spec"]}
        launch_vars(jt, {k: v for k, v in wf_vars.items() if k in asked})
    asked_anywhere = {
        q["variable"] for n in chain for q in JTS[nodes[n]["unified_job_template"]["name"]]["survey_spec"]["spec"]
    }
    assert {q["variable"] for q in wf["survey_spec"]["spec"]} <= asked_anywhere


def test_the_schedules_run_the_health_playbooks_with_their_survey_defaults() -> None:
    scheduled = {s["unified_job_template"] for s in OBJS["awx_schedules"]}
    assert {"hwaac health check", "hwaac network health"} <= scheduled
    for schedule in OBJS["awx_schedules"]:
        assert rrule_errors(schedule["rrule"]) == [], schedule["name"]
        launch_vars(JTS[schedule["unified_job_template"]], schedule.get("extra_data"))  # nobody answers


@pytest.mark.parametrize(
    ("rrule", "says"),
    [
        ("DTSTART:20260101T000000 RRULE:FREQ=HOURLY;INTERVAL=1", "naive datetime"),
        ("DTSTART;TZID=UTC:20260101T000000 RRULE:FREQ=HOURLY", "INTERVAL required"),
        ("DTSTART;TZID=UTC:20260101T000000 RRULE:FREQ=SECONDLY;INTERVAL=30", "SECONDLY"),
        ("DTSTART;TZID=UTC:20260101T000000 RRULE:FREQ=HOURLY;INTERVAL=1;COUNT=1000", "COUNT > 999"),
        ("DTSTART;TZID=UTC:20260101T000000 RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=1MO", "numeric prefix"),
        ("RRULE:FREQ=HOURLY;INTERVAL=1", "DTSTART required"),
    ],
)
def test_a_broken_rrule_is_refused(rrule: str, says: str) -> None:
    assert says in "; ".join(rrule_errors(rrule))


def test_the_credential_type_injects_exactly_netbox_url_and_token() -> None:
    (ctype,) = OBJS["awx_credential_types"]
    (cred,) = OBJS["awx_credentials"]
    assert cred["credential_type"] == ctype["name"]
    assert [f["id"] for f in ctype["inputs"]["fields"] if f.get("secret")] == ["token"]
    env, safe = inject(ctype, cred["inputs"])
    assert env == {"NETBOX_URL": "https://netbox.example.net", "NETBOX_TOKEN": "0123456789abcdef"}
    assert safe == {"NETBOX_URL": "https://netbox.example.net", "NETBOX_TOKEN": "**********"}  # job_env in AWX's DB
    # the configure run's token comes from the environment; the injectors reach AWX untemplated
    raw = load_objects(hwaac_awx_netbox_url="u0", hwaac_awx_netbox_token="t0")
    assert raw["awx_credentials"][0]["inputs"]["token"] == "t0"
    assert raw["awx_credential_types"][0]["injectors"]["env"] == {
        "NETBOX_URL": "{{ url }}",
        "NETBOX_TOKEN": "{{ token }}",
    }
    with pytest.raises(ValueError, match="ANSIBLE_CONFIG is not allowed"):
        inject({**ctype, "injectors": {"env": {"ANSIBLE_CONFIG": "{{ url }}"}}}, cred["inputs"])


def _stand_in_awx_collection(root: Path) -> Path:
    """An awx.awx collection path for --syntax-check only: one module file per recorded module (its argument spec,
    validated, and a refusal to run), so that ansible-playbook resolves the names."""
    modules = root / "ansible_collections" / "awx" / "awx" / "plugins" / "modules"
    modules.mkdir(parents=True)
    (root / "ansible_collections" / "awx" / "awx" / "meta").mkdir()
    (root / "ansible_collections" / "awx" / "awx" / "meta" / "runtime.yml").write_text("requires_ansible: '>=2.15'\n")
    for module in SPECS["modules"]:
        (modules / f"{module.split('.')[-1]}.py").write_text(
            "from ansible.module_utils.basic import AnsibleModule\n"
            "AnsibleModule(argument_spec={}).fail_json(msg='a stand-in of awx.awx for syntax checks only')\n"
        )
    return root


def test_the_configure_playbook_passes_ansible_playbook_syntax_check(tmp_path: Path) -> None:
    stand_in = _stand_in_awx_collection(tmp_path / "collections")
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "ANSIBLE_COLLECTIONS_PATH": f"{REPO}:{stand_in}", "NO_COLOR": "1"}
    for playbook in ("awx_configure.yml", "validate.yml", "terraform_apply.yml"):
        r = subprocess.run(
            [str(BIN / "ansible-playbook"), "--syntax-check", f"playbooks/{playbook}"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, playbook + r.stdout + r.stderr
    # without awx.awx the names do not resolve: the stand-in is what made the check pass, not a missing check
    r = subprocess.run(
        [str(BIN / "ansible-playbook"), "--syntax-check", "playbooks/awx_configure.yml"],
        cwd=REPO,
        env={**env, "ANSIBLE_COLLECTIONS_PATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0 and "awx.awx.organization" in r.stdout + r.stderr


def test_the_lint_mocks_exactly_the_awx_modules() -> None:
    lint = yaml.safe_load((REPO / ".ansible-lint").read_text())
    assert set(lint["mock_modules"]) == set(SPECS["modules"])


# --- the execution environment ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ee_context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ansible-builder create`` of awx/ee in a network namespace of its own (no network at all: unshare -n)."""
    ctx = tmp_path_factory.mktemp("ee") / "context"
    r = subprocess.run(
        [
            "unshare",
            "--net",
            str(BIN / "ansible-builder"),
            "create",
            "-f",
            str(EE / "execution-environment.yml"),
            "-c",
            str(ctx),
            "--output-filename",
            "Containerfile",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return ctx


def test_ansible_builder_creates_the_build_context_offline(ee_context: Path) -> None:
    containerfile = (ee_context / "Containerfile").read_text()
    stages = re.findall(r"^FROM (\S+) AS (\w+)$", containerfile, re.MULTILINE)
    assert stages == [("$EE_BASE_IMAGE", "base"), ("base", "galaxy"), ("base", "builder"), ("base", "final")]
    assert 'ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"' in containerfile
    assert 'ARG PYCMD="/usr/bin/python3.12"' in containerfile
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core>=2.21,<2.22 ansible-runner>=2.4,<3"' in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert "--user-pip=requirements.txt --user-bindep=bindep.txt" in containerfile
    assert "RUN dnf module enable -y nodejs:20" in containerfile
    for name in ("requirements.yml", "requirements.txt", "bindep.txt"):
        assert (ee_context / "_build" / name).read_text() == (EE / name).read_text(), name


def test_the_ee_requirements_follow_galaxy_yml_and_pyproject() -> None:
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    wanted = {f"{galaxy['namespace']}.{galaxy['name']}": galaxy["version"], **(galaxy.get("dependencies") or {})}
    have = {
        c["name"]: str(c.get("version", "*"))
        for c in yaml.safe_load((EE / "requirements.yml").read_text())["collections"]
    }
    assert have == {k: str(v) for k, v in wanted.items()}

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = [
        Requirement(line)
        for line in (EE / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert [(r.name, str(r.specifier)) for r in reqs] == [(project["name"], f"=={project['version']}")]
    assert reqs[0].extras <= set(project["optional-dependencies"])
    # the plugins import nothing but ansible, the collection, hwaac and the standard library
    imported = set()
    for path in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    assert imported - set(sys.stdlib_module_names) - {"__future__"} <= {"ansible", "ansible_collections", "hwaac"}


def test_bindep_reads_the_system_packages_for_the_ees_platform() -> None:
    deps = Depends((EE / "bindep.txt").read_text())
    rules = deps.active_rules(["platform:rpm", "platform:centos"])
    assert {r[0] for r in rules} == {"terraform", "nodejs", "git-core", "iputils", "openssh-clients"}


def test_the_objects_name_the_ee_image_and_inventory_file_of_this_folder() -> None:
    ee = yaml.safe_load((EE / "execution-environment.yml").read_text())
    assert OBJS["awx_execution_environments"][0]["image"] in ee["options"]["tags"]
    source = OBJS["awx_inventory_sources"][0]["source_path"]
    plugin = yaml.safe_load((REPO / source).read_text())
    assert plugin["plugin"] == "aiinfra.hwaac.fabric" and (REPO / source).parent.joinpath(plugin["intent"]).exists()
    assert json.loads(json.dumps(OBJS))  # every object is JSON (what the modules send to the API)


def test_the_configure_playbook_reads_every_file_of_the_objects_folder_once() -> None:
    assert len(OBJECT_FILES) == len(set(OBJECT_FILES))
    assert set(OBJECT_FILES) == set(OBJECTS.glob("*.yml"))
    # a variable set in two files: the later would hide the other (ansible-playbook's vars_files), so it is refused
    with pytest.raises(ValueError, match=r"schedules\.yml sets awx_schedules again"):
        load_objects([OBJECTS / "schedules.yml", OBJECTS / "schedules.yml"])
