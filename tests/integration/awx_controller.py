"""What AWX makes of the objects of awx/objects/, for the tests: the objects as playbooks/awx_configure.yml
templates them, checked against the recorded awx.awx argument specs (ansible-core's ArgumentSpecValidator), and
AWX 24.6.1's rules for surveys and launches, schedule rrules, credential injectors and the extra vars file (the
AWX source each follows is named in its docstring and in docs/awx.md)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from ansible.module_utils.basic import env_fallback
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from dateutil.rrule import rrulestr
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = Path(__file__).resolve().parents[2]
OBJECTS = REPO / "awx" / "objects"
CONFIGURE = REPO / "playbooks" / "awx_configure.yml"
# the files of awx/objects/ in the order the configure playbook reads them (its vars_files)
OBJECT_FILES = [(CONFIGURE.parent / f).resolve() for f in yaml.safe_load(CONFIGURE.read_text())[0]["vars_files"]]
SPECS = REPO / "tests" / "fixtures" / "awx" / "argument_specs.json"
HIDDEN_PASSWORD = "**********"  # awx/main/models/credential.py
# awx/main/constants.py ENV_BLOCKLIST (besides any ANSIBLE_* name: awx/main/fields.py validate_env_var_allowed)
ENV_BLOCKLIST = frozenset(
    {
        "VIRTUAL_ENV",
        "PATH",
        "PYTHONPATH",
        "JOB_ID",
        "INVENTORY_ID",
        "INVENTORY_SOURCE_ID",
        "INVENTORY_UPDATE_ID",
        "AD_HOC_COMMAND_ID",
        "REST_API_URL",
        "REST_API_TOKEN",
        "MAX_EVENT_RES",
        "CALLBACK_QUEUE",
        "CALLBACK_CONNECTION",
        "CACHE",
        "JOB_CALLBACK_DEBUG",
        "INVENTORY_HOSTVARS",
        "AWX_HOST",
        "PROJECT_REVISION",
        "SUPERVISOR_CONFIG_PATH",
    }
)
SURVEY_TYPES: dict[str, type | tuple[type, ...]] = {
    "text": str,
    "textarea": str,
    "password": str,
    "multiplechoice": str,
    "multiselect": (str, list),
    "integer": int,
    "float": (float, int),
}
# awx_configure.yml: the list of awx/objects/ each module's task loops over
OBJECT_LISTS = {
    "awx.awx.organization": "awx_organizations",
    "awx.awx.execution_environment": "awx_execution_environments",
    "awx.awx.credential_type": "awx_credential_types",
    "awx.awx.credential": "awx_credentials",
    "awx.awx.project": "awx_projects",
    "awx.awx.inventory": "awx_inventories",
    "awx.awx.inventory_source": "awx_inventory_sources",
    "awx.awx.job_template": "awx_job_templates",
    "awx.awx.workflow_job_template": "awx_workflow_job_templates",
    "awx.awx.schedule": "awx_schedules",
}


# --- the objects, as the configure playbook templates them ------------------------------------------------------


def load_objects(paths: Sequence[Path] = tuple(OBJECT_FILES), **overrides: Any) -> dict[str, Any]:
    """The files of awx/objects/ templated as ansible-playbook templates its vars files (``!unsafe`` values stay as
    written), with ``overrides`` as extra vars (-e). Give hwaac_awx_netbox_url and hwaac_awx_netbox_token: their
    defaults are lookups of the environment, and this templar loads no plugins (the test process's imports of the
    collection stay Python's own). A variable set by two files raises ValueError: the later would hide the other."""
    loader = DataLoader()
    data: dict[str, Any] = {}
    for path in paths:
        more = loader.load_from_file(str(path), trusted_as_template=True)
        if twice := sorted(set(data) & set(more)):
            raise ValueError(f"{path.name} sets {', '.join(twice)} again")
        data |= more
    variables = {**data, **overrides}
    # what the modules send to AWX is JSON: plain values, not Ansible's tagged ones
    return json.loads(json.dumps(Templar(loader=loader, variables=variables).template(variables)))


def job_templates(objects: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """name -> job template, awx_job_template_defaults combined under each (the configure playbook's loop)."""
    return {jt["name"]: {**objects["awx_job_template_defaults"], **jt} for jt in objects["awx_job_templates"]}


def module_objects(objects: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(module, object name, the object's options) of every object the configure playbook applies."""
    out = []
    for module, key in OBJECT_LISTS.items():
        items = list(job_templates(objects).values()) if key == "awx_job_templates" else objects[key]
        out += [(module, item["name"], item) for item in items]
    return out


# --- the awx.awx argument specs -----------------------------------------------------------------------------------


def load_specs(path: Path = SPECS) -> dict[str, Any]:
    return json.loads(path.read_text())


def _revive(spec: dict[str, Any]) -> dict[str, Any]:
    """A recorded spec with its fallbacks as ansible-core takes them (``(env_fallback, [VARS])``)."""
    out = {}
    for name, entry in spec.items():
        entry = dict(entry)
        if "fallback" in entry:
            entry["fallback"] = (env_fallback, entry["fallback"][1])
        if "options" in entry:
            entry["options"] = _revive(entry["options"])
        out[name] = entry
    return out


def spec_errors(specs: dict[str, Any], module: str, params: dict[str, Any]) -> list[str]:
    """What ArgumentSpecValidator says about ``params`` for ``module`` (awx.awx.<name>), with the module's own
    constraints; list options whose elements the code leaves free are checked against their documented
    suboptions too (workflow_nodes)."""
    entry = specs["modules"][module]
    validator = ArgumentSpecValidator(
        _revive(entry["argument_spec"]),
        mutually_exclusive=entry.get("mutually_exclusive"),
        required_together=entry.get("required_together"),
        required_one_of=entry.get("required_one_of"),
        required_if=entry.get("required_if"),
        required_by=entry.get("required_by"),
    )
    errors = [str(e) for e in validator.validate(copy.deepcopy(params)).errors]
    for option, suboptions in entry.get("documented_suboptions", {}).items():
        sub = ArgumentSpecValidator(_revive(suboptions))
        for k, element in enumerate(params.get(option) or []):
            errors += [f"{option}[{k}]: {e}" for e in sub.validate(copy.deepcopy(element)).errors]
    return errors


# --- surveys --------------------------------------------------------------------------------------------------------


def survey_spec_errors(spec: dict[str, Any]) -> list[str]:
    """AWX's checks of a survey spec when it is saved (``_validate_spec_data``)."""
    errors: list[str] = []
    for field, kind in (("name", str), ("description", str), ("spec", list)):
        if not isinstance(spec.get(field), kind):
            errors.append(f"survey spec field {field!r} missing or not a {kind.__name__}")
    if errors:
        return errors
    if not spec["spec"]:
        return ["'spec' doesn't contain any items"]
    seen: set[str] = set()
    for idx, q in enumerate(spec["spec"]):
        where = f"survey question {idx} ({q.get('variable')})"
        for field, kind in (("type", str), ("question_name", str), ("variable", str), ("required", bool)):
            if not isinstance(q.get(field), kind):
                errors.append(f"{where}: {field!r} missing or not a {kind.__name__}")
        if errors:
            return errors
        if q["variable"] in seen:
            errors.append(f"{where}: variable duplicated")
        seen.add(q["variable"])
        if q["type"] not in SURVEY_TYPES:
            errors.append(f"{where}: type {q['type']!r} is not one of {', '.join(SURVEY_TYPES)}")
            continue
        if q.get("default", "") != "" and not isinstance(q["default"], SURVEY_TYPES[q["type"]]):
            errors.append(f"{where}: default {q['default']!r} is not a {q['type']} value")
        errors += [
            f"{where}: {k} {q[k]!r} is not an integer"
            for k in ("min", "max")
            if q.get(k) is not None and not isinstance(q[k], int)
        ]
        if q["type"] in ("multiplechoice", "multiselect"):
            if "choices" not in q:
                errors.append(f"{where}: a {q['type']} question needs choices")
                continue
            defaults = q.get("default", [])
            defaults = defaults.splitlines() if isinstance(defaults, str) else defaults
            if q["type"] == "multiplechoice" and len(defaults) > 1:
                errors.append(f"{where}: a multiplechoice question has one default")
            errors += [f"{where}: default {d!r} is not one of the choices" for d in defaults if d not in q["choices"]]
    return errors


def answer_errors(question: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """AWX's check of one survey answer (``_survey_element_validation``); ``data`` maps variables to answers."""
    var, kind = question["variable"], question["type"]
    if var not in data:
        return [f"{var!r} value missing"] if question["required"] else []
    value = data[var]
    if kind in ("text", "textarea", "password"):
        if not isinstance(value, str):
            return [f"value {value!r} for {var!r} expected to be a string"]
        if question.get("min") not in ("", None) and len(value) < int(question["min"]):
            return [f"{var!r} value {value!r} is too short (at least {question['min']})"]
        if question.get("max") not in ("", None) and len(value) > int(question["max"]):
            return [f"{var!r} value {value!r} is too long (at most {question['max']})"]
    elif kind in ("integer", "float"):
        if type(value) not in ((int,) if kind == "integer" else (int, float)):  # bool is no integer answer
            return [f"value {value!r} for {var!r} expected to be {'an integer' if kind == 'integer' else 'a number'}"]
        if question.get("min") not in ("", None) and value < question["min"]:
            return [f"{var!r} value {value!r} is too small (at least {question['min']})"]
        if question.get("max") not in ("", None) and value > question["max"]:
            return [f"{var!r} value {value!r} is too large (at most {question['max']})"]
    elif kind == "multiselect":
        if not isinstance(value, list):
            return [f"{var!r} value is expected to be a list"]
        return [
            f"value {v!r} for {var!r} expected to be one of {question['choices']}"
            for v in value
            if v not in question["choices"]
        ]
    elif kind == "multiplechoice" and value not in question["choices"]:
        return [f"value {value!r} for {var!r} expected to be one of {question['choices']}"]
    return []


def launch_vars(template: dict[str, Any], answers: dict[str, Any] | None = None) -> dict[str, Any]:
    """The extra vars of a job launched from ``template`` with the survey ``answers``: the template's extra_vars,
    then the survey defaults that pass their question's check (AWX drops the others silently), then the answers
    (``_update_unified_job_kwargs``). An answer the survey refuses, or a required question left without an answer or
    default, raises ValueError naming it, as AWX refuses the launch; so does a variable the template does not
    prompt for."""
    answers = dict(answers or {})
    spec = template.get("survey_spec", {}).get("spec", []) if template.get("survey_enabled") else []
    defaults = {
        q["variable"]: q["default"]
        for q in spec
        if q.get("default") is not None and not answer_errors(q, {q["variable"]: q["default"]})
    }
    asked = {q["variable"] for q in spec}
    if not template.get("ask_variables_on_launch") and (stray := sorted(set(answers) - asked)):
        raise ValueError(f"{template['name']}: variables {', '.join(stray)} are not allowed on launch")
    errors = [e for q in spec for e in answer_errors(q, {**defaults, **answers})]
    if errors:
        raise ValueError(f"{template['name']}: {'; '.join(errors)}")
    return {**template.get("extra_vars", {}), **defaults, **answers}


# --- schedules ------------------------------------------------------------------------------------------------------


def rrule_errors(value: str) -> list[str]:
    """AWX's checks of a schedule's rrule (``validate_rrule``), then dateutil's parse, as Schedule.rrulestr."""
    errors = []
    dtstarts = re.findall(r".*?(DTSTART(;[^:]+)?\:[0-9]+T[0-9]+Z?)", value)
    if not dtstarts:
        errors.append("valid DTSTART required")
    if re.findall(r".*?(DTSTART:[0-9]+T[0-9]+) ", value):
        errors.append("DTSTART cannot be a naive datetime")
    if len(dtstarts) > 1:
        errors.append("multiple DTSTART is not supported")
    if "rrule:" not in value.lower():
        errors.append("one or more rule required")
    if "exdate:" in value.lower() or "rdate:" in value.lower():
        errors.append("EXDATE and RDATE are not allowed")
    for rule in re.findall(r".*?(RULE\:[^\s]*)", value):
        if "interval" not in rule.lower():
            errors.append(f"INTERVAL required: {rule}")
        elif "secondly" in rule.lower():
            errors.append(f"SECONDLY is not supported: {rule}")
        if re.match(r".*?BYDAY[\:\=][0-9]+[a-zA-Z]{2}", rule):
            errors.append(f"BYDAY with numeric prefix not supported: {rule}")
        if "COUNT" in rule and "UNTIL" in rule:
            errors.append(f"RRULE may not contain both COUNT and UNTIL: {rule}")
        if (m := re.match(r".*?COUNT=([0-9]+)", rule)) and int(m.group(1)) > 999:
            errors.append(f"COUNT > 999 is unsupported: {rule}")
    try:
        rrulestr(value, forceset=True)
    except (ValueError, TypeError) as exc:
        errors.append(f"rrule parsing failed: {exc}")
    return errors


# --- credentials ----------------------------------------------------------------------------------------------------


def inject(credential_type: dict[str, Any], inputs: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The environment a credential of ``credential_type`` with ``inputs`` gives a job, and the same as AWX stores
    it with the job (secret inputs hidden): ``CredentialType.inject_credential`` for env injectors."""
    secret = {f["id"] for f in credential_type["inputs"].get("fields", []) if f.get("secret")}
    namespace = {k: v for k, v in inputs.items() if isinstance(v, bool) or len(v)}
    safe = {k: (HIDDEN_PASSWORD if k in secret else v) for k, v in namespace.items()}
    sandbox = ImmutableSandboxedEnvironment()
    env: dict[str, str] = {}
    safe_env: dict[str, str] = {}
    for name, template in credential_type["injectors"].get("env", {}).items():
        if name.startswith("ANSIBLE_") or name in ENV_BLOCKLIST:
            raise ValueError(f"{credential_type['name']}: environment variable {name} is not allowed in credentials")
        env[name] = sandbox.from_string(template).render(**namespace)
        safe_env[name] = sandbox.from_string(template).render(**safe)
    return env, safe_env


# --- the extra vars file ----------------------------------------------------------------------------------------------


class _Unsafe(yaml.SafeDumper):
    """Every string !unsafe: Ansible does not template it."""


_Unsafe.add_representer(str, lambda dumper, value: dumper.represent_scalar("!unsafe", value))


def extravars_yaml(extra_vars: dict[str, Any], trusted: dict[str, Any]) -> str:
    """env/extravars as AWX writes it (``safe_dump``): a top-level variable whose value is the job template's own
    (``trusted``) stays templatable; every other one (survey answers, defaults, launch variables) is !unsafe."""
    return "".join(
        yaml.dump(
            {k: v}, Dumper=yaml.SafeDumper if trusted.get(k, object()) == v else _Unsafe, default_flow_style=False
        )
        for k, v in extra_vars.items()
    )
