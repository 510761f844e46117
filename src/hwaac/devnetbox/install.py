"""NetBox from PyPI into its own Python 3.12 virtual environment (``STATE/venv``), once.

``pip install netbox==VERSION`` takes about a minute (measured 50 to 80 s; psycopg builds against libpq-dev).
A stamp file records the installed version, so later runs only check it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from hwaac.devnetbox.errors import LocalNetBoxError

STAMP = ".hwaac-netbox-installed"


def find_python312() -> str:
    """A Python 3.12 interpreter: ours when it is 3.12 (a venv's base is used by ``-m venv``), else on PATH."""
    if sys.version_info[:2] == (3, 12):
        return sys.executable
    for name in ("python3.12", "/usr/bin/python3.12", "/usr/local/bin/python3.12"):
        path = shutil.which(name)
        if path:
            r = subprocess.run(
                [path, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"], capture_output=True, text=True
            )
            if r.stdout.strip() == "True":
                return path
    raise LocalNetBoxError("Python 3.12 not found (NetBox 4.7 needs it); install python3.12")


def installed(venv: Path, version: str) -> bool:
    """True when ``venv`` holds NetBox ``version`` installed by :func:`install`."""
    stamp = venv / STAMP
    return stamp.is_file() and stamp.read_text().strip() == version and (venv / "bin" / "gunicorn").is_file()


def install(venv: Path, version: str, log: Path) -> None:
    """Create ``venv`` (replacing a broken one) and ``pip install netbox==version`` into it; output to ``log``."""
    if venv.exists():
        shutil.rmtree(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    steps = [
        ("python -m venv", [find_python312(), "-m", "venv", str(venv)]),
        ("pip install", [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-input", f"netbox=={version}"]),
    ]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        for step, argv in steps:
            out.write(f"\n$ {' '.join(argv)}\n".encode())
            out.flush()
            rc = subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
            if rc != 0:
                raise LocalNetBoxError(f"installing NetBox {version} failed: {step} exit {rc}", log=log)
    (venv / STAMP).write_text(version + "\n")
