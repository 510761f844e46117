"""Secrets and NetBox's ``configuration.py`` for the local NetBox.

Secrets (Django SECRET_KEY, the v2 API token pepper, the PostgreSQL, Redis and admin passwords) are generated
once into ``STATE/secrets.json`` (mode 0600) and never printed. ``configuration.py`` holds no secret: it reads
them from that file, and takes the database name, Redis databases and ports from environment variables that hwaac
sets for each NetBox process (``HWAAC_NB_*``), defaulting to the main instance of the last ``up``.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

SECRET_FILE = "secrets.json"

# NetBox requires SECRET_KEY >= 50 characters and each API_TOKEN_PEPPERS value >= 50 characters
# (NetBox docs configuration/required-parameters#secret_key and #api_token_peppers).
_LENGTHS = {"secret_key": 60, "pepper": 60, "db_password": 32, "redis_password": 32, "admin_password": 24}


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` created with mode 0600 (never readable by others, not even briefly)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    tmp.replace(path)


def read_secrets(state: Path) -> dict[str, str]:
    """The state folder's secrets (never generates; LocalNetBoxError when the folder is not set up)."""
    try:
        return json.loads((state / SECRET_FILE).read_text())
    except (OSError, ValueError):
        from hwaac.devnetbox.errors import LocalNetBoxError

        raise LocalNetBoxError(f"the local NetBox is not set up in {state}; run `hwaac netbox up`") from None


def load_secrets(state: Path) -> tuple[dict[str, str], bool]:
    """The state folder's secrets, generating the missing ones. Returns (secrets, True if any was new)."""
    path = state / SECRET_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    new = False
    for name, length in _LENGTHS.items():
        if not isinstance(data.get(name), str) or len(data[name]) < length:
            # letters and digits only: safe inside configuration files and URLs without quoting
            data[name] = "".join(
                secrets.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(length)
            )
            new = True
    if new or (path.stat().st_mode & 0o077):
        write_private(path, json.dumps(data, indent=1) + "\n")
    return data, new


CONFIGURATION = '''\
"""NetBox configuration of hwaac's local NetBox, written by hwaac (src/hwaac/devnetbox/config.py); do not edit.

Secrets come from {secret_file} in the state folder; database, Redis databases and ports from HWAAC_NB_* set by
hwaac for each NetBox process, defaulting to the main instance of the last `hwaac netbox up` (run/services.json).
"""
import json
import os
from pathlib import Path

_STATE = Path({state!r})
_SECRETS = json.loads((_STATE / {secret_file!r}).read_text())
try:
    _RUN = json.loads((_STATE / "run" / "services.json").read_text())
except (OSError, ValueError):
    _RUN = {{}}


def _env(name, default):
    return os.environ.get("HWAAC_NB_" + name, default)


ALLOWED_HOSTS = ["*"]  # served on 127.0.0.1 only
DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _env("DATABASE", "netbox"),
        "USER": "postgres",
        "PASSWORD": _SECRETS["db_password"],
        "HOST": "127.0.0.1",
        "PORT": int(_env("PG_PORT", _RUN.get("pg_port", 5432))),
        "CONN_MAX_AGE": 300,
        "CONN_HEALTH_CHECKS": True,
    }}
}}
_REDIS_DB = int(_env("REDIS_DB", 0))
REDIS = {{
    section: {{
        "HOST": "127.0.0.1",
        "PORT": int(_env("REDIS_PORT", _RUN.get("redis_port", 6379))),
        "PASSWORD": _SECRETS["redis_password"],
        "DATABASE": _REDIS_DB + offset,
        "SSL": False,
    }}
    for section, offset in (("tasks", 0), ("caching", 1))
}}
SECRET_KEY = _SECRETS["secret_key"]
API_TOKEN_PEPPERS = {{1: _SECRETS["pepper"]}}
CENSUS_REPORTING_ENABLED = False  # offline
RELEASE_CHECK_URL = None
TIME_ZONE = "UTC"
'''


def write_configuration(state: Path, netbox_root: Path) -> Path:
    """Write ``NETBOX_ROOT/conf/configuration.py`` (the path NetBox's wheel loads) and return it."""
    conf = netbox_root / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "__init__.py").touch()
    path = conf / "configuration.py"
    text = CONFIGURATION.format(state=str(state), secret_file=SECRET_FILE)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path
