"""The SONiC side of a lab switch, as files in its device folder ``dev/<device>/`` of the lab.

``config_db.json`` is the running CONFIG_DB (what redis holds on a switch), ``etc/sonic/config_db.json`` the saved
one (``config save``), ``etc/sonic/checkpoints/<name>.cp.json`` GCU's checkpoints (sonic-utilities keeps them in
``/etc/sonic/checkpoints``), ``etc/sonic/sonic_version.yml`` the image facts GCU reads (``asic_type``,
``build_version``). A lab brought up from a render without a running file runs that render's config. Writes are
atomic (temp file, fsync, rename) and serialised per switch by a lock on ``etc/sonic/.lock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.fileio import write_atomic
from hwaac.lab.errors import LabError
from hwaac.lab.names import check_name

CHECKPOINT_SUFFIX = ".cp.json"
CHECKPOINT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
CHECKPOINT_NAME_VALID = "1 to 64 of A-Z, a-z, 0-9, '_', '-' and '.'"
DEFAULT_ASIC = "vs"  # SONiC's virtual switch; GCU maps its hwsku like a mellanox or broadcom one


@dataclass(frozen=True, slots=True)
class SonicVersion:
    """What ``/etc/sonic/sonic_version.yml`` says of the image (sonic_py_common.device_info reads it)."""

    asic_type: str
    build_version: str
    release: str


class SwitchState:
    """The SONiC files of one lab switch (see the module docstring)."""

    def __init__(self, folder: Path, rendered: Path | None = None) -> None:
        """``folder``: the switch's device folder; ``rendered``: the config it runs while it has no running file."""
        self.folder = folder
        self.rendered = rendered

    @property
    def running_file(self) -> Path:
        return self.folder / "config_db.json"

    @property
    def etc(self) -> Path:
        return self.folder / "etc" / "sonic"

    @property
    def saved_file(self) -> Path:
        return self.etc / "config_db.json"

    @property
    def version_file(self) -> Path:
        return self.etc / "sonic_version.yml"

    @property
    def checkpoint_dir(self) -> Path:
        return self.etc / "checkpoints"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold this switch's lock for the block (one config command at a time per switch)."""
        self.etc.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.etc / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def running(self) -> dict[str, Any]:
        """The running CONFIG_DB (the rendered config while no running file was written).

        Raises:
            LabError: neither file exists or it is not a config_db object.
        """
        path = self.running_file
        if not path.exists() and self.rendered is not None:
            path = self.rendered
        return _read_config(path)

    def write_running(self, config: dict[str, Any]) -> None:
        _write_json(self.running_file, config)

    def saved(self) -> dict[str, Any] | None:
        return _read_config(self.saved_file) if self.saved_file.exists() else None

    def save(self) -> None:
        """``config save``: the running config becomes the saved one."""
        _write_json(self.saved_file, self.running())

    def checkpoint_file(self, name: str) -> Path:
        """The file of checkpoint ``name``.

        Raises:
            LabError: the name cannot name a file.
        """
        return self.checkpoint_dir / f"{check_checkpoint_name(name)}{CHECKPOINT_SUFFIX}"

    def checkpoints(self) -> list[str]:
        """The checkpoint names, sorted."""
        if not self.checkpoint_dir.is_dir():
            return []
        return sorted(p.name[: -len(CHECKPOINT_SUFFIX)] for p in self.checkpoint_dir.glob(f"*{CHECKPOINT_SUFFIX}"))

    def checkpoint(self, name: str) -> dict[str, Any] | None:
        """The content of checkpoint ``name``, or None when there is none."""
        path = self.checkpoint_file(name)
        return _read_config(path) if path.exists() else None

    def write_checkpoint(self, name: str, config: dict[str, Any]) -> None:
        path = self.checkpoint_file(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_json(path, config)

    def delete_checkpoint(self, name: str) -> bool:
        """Remove checkpoint ``name``; whether there was one."""
        path = self.checkpoint_file(name)
        if not path.exists():
            return False
        path.unlink()
        return True

    def version(self) -> SonicVersion:
        """The image facts (:func:`write_version`); a virtual-switch image of the default release when unset."""
        facts: dict[str, str] = {}
        if self.version_file.exists():
            for line in self.version_file.read_text(encoding="utf-8").splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.startswith("#"):
                    facts[key.strip()] = value.strip().strip("'\"")
        release = facts.get("release") or default_release()
        return SonicVersion(
            asic_type=facts.get("asic_type") or DEFAULT_ASIC,
            build_version=facts.get("build_version") or build_version(release),
            release=release,
        )

    def write_version(self, version: SonicVersion) -> None:
        """Write ``sonic_version.yml`` (the keys SONiC's own file has, plus ``release``)."""
        self.etc.mkdir(parents=True, exist_ok=True)
        _write_text(
            self.version_file,
            "# written by hwaac lab (the image this lab switch stands for)\n"
            f"build_version: '{version.build_version}'\n"
            f"asic_type: {version.asic_type}\n"
            f"release: '{version.release}'\n",
        )

    def reset(self, config: dict[str, Any]) -> None:
        """A freshly installed switch: ``config`` running and saved, no checkpoints."""
        for name in self.checkpoints():
            self.delete_checkpoint(name)
        self.write_running(config)
        _write_json(self.saved_file, config)


def check_checkpoint_name(name: str) -> str:
    """The name itself when it can name a checkpoint file. Raises LabError naming the value and what is valid."""
    return check_name("checkpoint name", name, CHECKPOINT_NAME_RE, CHECKPOINT_NAME_VALID)


def default_release() -> str:
    """The SONiC release hwaac renders for when the intent names none."""
    from hwaac.model.sonic_releases import DEFAULT_RELEASE

    return DEFAULT_RELEASE


def build_version(release: str) -> str:
    """A ``build_version`` of a community image of ``release`` (e.g. ``SONiC.202505.01``)."""
    return f"SONiC.{release}.01"


def asic_type(config: dict[str, Any]) -> str:
    """The ASIC family of a switch from its DEVICE_METADATA: ``mellanox`` for NVIDIA/Mellanox platforms and SKUs
    (``x86_64-nvidia_sn5600-r0``, ``Mellanox-SN5600-O128``), else SONiC's virtual switch ``vs``."""
    meta = (config.get("DEVICE_METADATA") or {}).get("localhost") or {}
    text = f"{meta.get('platform', '')} {meta.get('hwsku', '')}".lower()
    return "mellanox" if any(w in text for w in ("mellanox", "nvidia", "mlnx")) else DEFAULT_ASIC


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LabError(f"{path}: no such config_db file") from None
    except (OSError, ValueError) as exc:
        raise LabError(f"{path}: not readable as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: not a config_db object (top level is {type(data).__name__})")
    return data


def _write_json(path: Path, data: Any) -> None:
    _write_text(path, json.dumps(data, indent=4) + "\n")


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, durable=True)
