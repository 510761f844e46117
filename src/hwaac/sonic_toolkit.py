"""SONiC's own checks, offline: the SONiC toolkit (``sonic-yang-validate``, ``sonic-gcu-dryrun``) run from hwaac.

The toolkit folder, outside the checkout, is named by ``HWAAC_SONIC_TOOLKIT``; ``DIR/setup.sh PYTHON`` (or
``scripts/sonic-toolkit.sh``) prepares it once and writes ``env.sh`` into its cache, ``HWAAC_SONIC_CACHE`` or
``${XDG_CACHE_HOME:-~/.cache}/hwaac-sonic-toolkit/<DIR/VERSION>``. The public calls are :func:`yang_validate` and
:func:`gcu_dryrun`; both raise :class:`ToolkitError` when the toolkit is missing, not set up or fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_VAR = "HWAAC_SONIC_TOOLKIT"
CACHE_VAR = "HWAAC_SONIC_CACHE"
YANG_TIMEOUT_S = 120.0  # plus YANG_TIMEOUT_PER_FILE_S per file: guards against a hang, not a speed check
YANG_TIMEOUT_PER_FILE_S = 5.0
GCU_TIMEOUT_S = 1800.0

# GCU's ASIC check (generic_config_updater/field_operation_validators.py get_asic_name) runs
# ``sonic-cfggen -d -v DEVICE_METADATA.localhost.hwsku`` once per PFC_WD/BUFFER_* operation; the toolkit's
# sonic-cfggen needs ~1.4 s to start (92 of 125 s of a full first push of a 128-port leaf). This stand-in, first on
# PATH, answers exactly that form from the CONFIG_DB file the toolkit's swsscommon stub serves
# ($SWSSCOMMON_STUB_CONFIG_DB) and hands every other call to the real sonic-cfggen.
CFGGEN_SHIM = """\
import json, os, sys
args = sys.argv[1:]
if len(args) == 3 and args[:2] == ["-d", "-v"] and os.environ.get("SWSSCOMMON_STUB_CONFIG_DB"):
    with open(os.environ["SWSSCOMMON_STUB_CONFIG_DB"]) as f:
        value = json.load(f)
    for part in args[2].split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    print(value)
    sys.exit(0)
here = os.path.dirname(os.path.realpath(__file__))
os.environ["PATH"] = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                     if os.path.realpath(p or ".") != here)
os.execvp("sonic-cfggen", ["sonic-cfggen", *args])
"""


class ToolkitError(Exception):
    """The toolkit cannot be used: not named, not set up, or a tool failed to run (not a verdict on a config)."""


@dataclass(frozen=True, slots=True)
class Toolkit:
    """A set-up toolkit: its folder, cache, version and the environment its ``env.sh`` sets."""

    home: Path
    cache: Path
    version: str
    env: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class YangError:
    """One error of ``sonic-yang-validate``: ``TABLE|key field: message`` and libyang's xpath."""

    table: str
    key: str
    field: str
    message: str
    xpath: str = ""

    def __str__(self) -> str:
        where = "|".join(p for p in (self.table, self.key) if p)
        return f"{where}{' ' + self.field if self.field else ''}: {self.message}"


@dataclass(frozen=True, slots=True)
class YangResult:
    """The verdict on one config_db file (SONiC's ``loadData`` + ``validate_data_tree``)."""

    file: str
    valid: bool
    errors: tuple[YangError, ...] = ()
    tables_without_yang: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GcuResult:
    """What ``config apply-patch --dry-run`` decides on a patch (sonic-utilities generic_config_updater).

    Attributes:
        accepted: GCU would apply the patch.
        kind: why not: ``yang``, ``no-yang``, ``empty-table``, ``illegal-op``, ``patch``, ``format``, ``device``
            (a check that needs device facts: give asic_type/build_version) or ``other``; None when accepted.
        error: GCU's message (None when accepted); details: the YANG errors of the target config, if any.
        changes: the patch as GCU would apply it, change by change (each a JSON patch), in its order.
        config: the running config after the patch (None when not accepted).
        seconds: the time GCU took.
    """

    accepted: bool
    kind: str | None
    error: str | None
    details: tuple[str, ...] = ()
    changes: tuple[list[dict[str, Any]], ...] = ()
    config: dict[str, Any] | None = None
    seconds: float = 0.0


def default_cache(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """``$HWAAC_SONIC_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/hwaac-sonic-toolkit/<home/VERSION>``."""
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_VAR):
        return Path(environ[CACHE_VAR])
    base = Path(environ.get("XDG_CACHE_HOME") or Path(environ.get("HOME") or Path.home()) / ".cache")
    return base / "hwaac-sonic-toolkit" / _version(home)


def _version(home: Path) -> str:
    try:
        return (home / "VERSION").read_text().strip()
    except OSError as exc:
        raise ToolkitError(f"{ENV_VAR}={home}: not a SONiC toolkit folder (no readable VERSION file: {exc})") from None


_ENV_CACHE: dict[tuple[str, float], dict[str, str]] = {}


def _load_env(env_sh: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The environment after ``. env.sh`` in bash, read back with ``env -0`` (cached per file and mtime)."""
    key = (str(env_sh), env_sh.stat().st_mtime)
    if key not in _ENV_CACHE:
        proc = subprocess.run(
            ["bash", "-c", '. "$1" >/dev/null && env -0', "bash", str(env_sh)],
            env=dict(base),
            capture_output=True,
            timeout=60,
            check=False,
        )
        if proc.returncode != 0:
            raise ToolkitError(
                f"sourcing {env_sh} failed (exit {proc.returncode}): {proc.stderr.decode(errors='replace').strip()}"
            )
        env = {}
        for item in proc.stdout.split(b"\0"):
            name, sep, value = item.decode(errors="surrogateescape").partition("=")
            if sep:
                env[name] = value
        _ENV_CACHE[key] = env
    return dict(_ENV_CACHE[key])


def locate(environ: Mapping[str, str] | None = None) -> Toolkit:
    """The toolkit named by ``HWAAC_SONIC_TOOLKIT``, with the environment of its ``env.sh``.

    Raises:
        ToolkitError: the variable is unset, the folder is not a toolkit, or ``env.sh`` is missing (the message
            says to run ``DIR/setup.sh PYTHON``).
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(ENV_VAR)
    if not raw:
        raise ToolkitError(
            f"{ENV_VAR} is not set: point it at the SONiC toolkit folder "
            "(SONiC's YANG models, sonic-cfggen, GCU and FRR templates, with its setup.sh)"
        )
    home = Path(raw).expanduser().resolve()
    if not home.is_dir():
        raise ToolkitError(f"{ENV_VAR}={raw}: no such folder")
    cache = default_cache(home, environ)
    env_sh = cache / "env.sh"
    if not env_sh.is_file():
        raise ToolkitError(
            f"the SONiC toolkit {home} is not set up ({env_sh} is missing): run "
            f"{home}/setup.sh PYTHON (a Python 3.12 virtualenv's python, e.g. .venv-sonic/bin/python; "
            "scripts/sonic-toolkit.sh does it)" + (f" with {CACHE_VAR}={cache}" if environ.get(CACHE_VAR) else "")
        )
    env = _load_env(env_sh, environ)
    return Toolkit(home=home, cache=cache, version=_version(home), env=env)


def _run(
    toolkit: Toolkit, argv: list[str], timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, env=dict(env or toolkit.env), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ToolkitError(f"{argv[0]} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise ToolkitError(f"{argv[0]} cannot be run from {toolkit.home}: {exc}") from None


def _json_out(proc: subprocess.CompletedProcess[str], tool: str) -> dict[str, Any]:
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise ToolkitError(f"{tool} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}") from None
    if not isinstance(doc, dict):
        raise ToolkitError(f"{tool} printed no JSON document (exit {proc.returncode})")
    return doc


def yang_validate(
    paths: Iterable[str | Path], *, toolkit: Toolkit | None = None, timeout: float | None = None
) -> list[YangResult]:
    """Validate config_db.json files with SONiC's YANG models, as ``config reload`` and GCU check them.

    One ``sonic-yang-validate --json`` run for all files (loading the models takes about a second; each file
    about 0.15 s more). Tables without a YANG model make a file invalid, as on a switch.

    Args:
        paths: config_db.json files (single- or multi-ASIC).
        toolkit: from :func:`locate` (default: located from the environment).
        timeout: seconds for the whole run (default :data:`YANG_TIMEOUT_S` plus :data:`YANG_TIMEOUT_PER_FILE_S`
            per file).

    Returns:
        One :class:`YangResult` per file, in the order given.

    Raises:
        ToolkitError: the toolkit is missing or not set up, a file cannot be read, or the run failed or timed out.
    """
    files = [str(p) for p in paths]
    if not files:
        return []
    tk = toolkit or locate()
    limit = timeout if timeout is not None else YANG_TIMEOUT_S + YANG_TIMEOUT_PER_FILE_S * len(files)
    proc = _run(tk, ["sonic-yang-validate", "--json", "-q", *files], limit)
    doc = _json_out(proc, "sonic-yang-validate")
    if proc.returncode not in (0, 1):
        raise ToolkitError(
            f"sonic-yang-validate: setup or usage error (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}"
        )
    out = []
    for res in doc.get("results", []):
        if res.get("valid") is None:
            raise ToolkitError(f"sonic-yang-validate could not check {res.get('file')}: {res.get('error', '')}")
        errors = tuple(
            YangError(
                str(e.get("table") or ""),
                str(e.get("key") or ""),
                str(e.get("field") or ""),
                str(e.get("message") or ""),
                str(e.get("xpath") or ""),
            )
            for e in res.get("errors", [])
        )
        out.append(
            YangResult(
                file=str(res.get("file")),
                valid=bool(res["valid"]),
                errors=errors,
                tables_without_yang=tuple(res.get("tables_without_yang") or ()),
            )
        )
    return out


def gcu_dryrun(
    running: Mapping[str, Any],
    patch: list[Mapping[str, Any]],
    *,
    asic_type: str | None = None,
    build_version: str | None = None,
    state_db: Mapping[str, Any] | None = None,
    extra_args: Iterable[str] = (),
    toolkit: Toolkit | None = None,
    timeout: float = GCU_TIMEOUT_S,
) -> GcuResult:
    """Decide a patch as ``config apply-patch --dry-run PATCH`` would on a switch whose CONFIG_DB is ``running``.

    SONiC's generic config updater runs unmodified (patch checks, YANG validation of the target config, field
    operation validators, the patch sorter, dry-run apply). A full first push of a 128-port leaf takes GCU's
    sorter tens of seconds. GCU refuses every patch while ``running`` itself is YANG-invalid.

    Args:
        running: the switch's CONFIG_DB (``sonic-cfggen -d --print-data``), single-ASIC.
        patch: RFC 6902 operations in GCU's CONFIGDB format.
        asic_type, build_version: ``/etc/sonic/sonic_version.yml`` facts (e.g. ``mellanox``,
            ``SONiC.202505.01``); SONiC gates PFC_WD, BUFFER_POOL and BUFFER_PROFILE changes on them.
        state_db: STATE_DB entries (``{"PORT_TABLE|Ethernet0": {"supported_speeds": ...}}``) for PORT speed/fec.
        extra_args: more ``sonic-gcu-dryrun`` options (``--ignore-non-yang-tables``, ``--ignore-path P``).
        toolkit: from :func:`locate` (default: located from the environment).
        timeout: seconds.

    Returns:
        A :class:`GcuResult`: accepted with the changes and resulting config, or rejected with GCU's reason;
        ``kind == "device"`` when a check needs device facts that were not given.

    Raises:
        ToolkitError: the toolkit is missing or not set up, or the run failed or timed out.
    """
    tk = toolkit or locate()
    with tempfile.TemporaryDirectory(prefix="hwaac-gcu-") as tmp:
        run_file, patch_file = Path(tmp) / "running.json", Path(tmp) / "patch.json"
        run_file.write_text(json.dumps(running))
        patch_file.write_text(json.dumps(list(patch)))
        argv = ["sonic-gcu-dryrun", "--json", "-q", str(run_file), str(patch_file)]
        if asic_type:
            argv += ["--asic-type", asic_type]
        if build_version:
            argv += ["--build-version", build_version]
        if state_db is not None:
            state_file = Path(tmp) / "state_db.json"
            state_file.write_text(json.dumps(state_db))
            argv += ["--state-db", str(state_file)]
        argv += list(extra_args)
        shim_dir = Path(tmp) / "bin"
        shim_dir.mkdir()
        shim = shim_dir / "sonic-cfggen"
        shim.write_text(f"#!{tk.env.get('SONIC_KIT_PYTHON') or 'python3'}\n" + CFGGEN_SHIM)
        shim.chmod(0o755)
        env = dict(tk.env)
        env["PATH"] = f"{shim_dir}{os.pathsep}{env.get('PATH', '')}"
        proc = _run(tk, argv, timeout, env)
    doc = _json_out(proc, "sonic-gcu-dryrun")
    kind = doc.get("kind")
    if proc.returncode not in (0, 1) and kind != "device":
        raise ToolkitError(f"sonic-gcu-dryrun: {doc.get('error') or proc.stderr.strip()[-2000:]}")
    return GcuResult(
        accepted=doc.get("result") == "accepted",
        kind=kind,
        error=doc.get("error"),
        details=tuple(doc.get("details") or ()),
        changes=tuple(doc.get("changes") or ()),
        config=doc.get("config"),
        seconds=float(doc.get("seconds") or 0.0),
    )


__all__ = ["GcuResult", "Toolkit", "ToolkitError", "YangError", "YangResult", "gcu_dryrun", "locate", "yang_validate"]
