"""Lab switches as freshly installed SONiC: the image's facts, its tools, its factory config, and a reset to it.

:func:`prepare` gives every switch of a lab its ``sonic_version.yml`` (ASIC type from the platform, the release of
the plan, else hwaac's default) and its ``sonic-cfggen``/``config`` wrappers; :func:`reset` makes each switch a
bare one: the factory config (:func:`factory_config`) running and saved, no checkpoints, and FRR reloaded to a
config without BGP (zebra and bgpd keep running). A deploy then starts from nothing. See docs/lab-deploy.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.sonic_cli import Switch, write_wrappers
from hwaac.lab.sonic_state import SonicVersion, asic_type, build_version, default_release

Log = Callable[[str], None]
PORT_PLATFORM_FIELDS = ("alias", "lanes", "speed", "index")  # what the SKU's port_config.ini gives
PFCWD_POLL_INTERVAL = "200"  # sonic-utilities pfcwd/main.py DEFAULT_POLL_INTERVAL (ms)
WORKERS = 4


def factory_config(rendered: Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """The CONFIG_DB of a freshly installed switch of ``rendered``'s platform (its rendered config_db).

    DEVICE_METADATA holds the platform facts (hwsku, platform, a system MAC from the documentation range,
    RFC 7042) and hostname ``sonic``; the management network (RFC 5737 address); PORT the SKU's fields only
    (alias, lanes, speed, index); the ``bgp`` feature; PFC_WD|GLOBAL POLL_INTERVAL as ``pfcwd interval 200``
    writes it, which GCU needs: on Mellanox it refuses to create the PFC_WD table (docs/lab-deploy.md).

    Raises:
        LabError: ``rendered`` has no DEVICE_METADATA hwsku/platform or no PORT table.
    """
    meta = (rendered.get("DEVICE_METADATA") or {}).get("localhost") or {}
    missing = [f for f in ("hwsku", "platform") if not meta.get(f)]
    if missing or not rendered.get("PORT"):
        raise LabError(
            f"rendered config_db has no {'/'.join(missing) or 'PORT table'} "
            f"(DEVICE_METADATA.localhost hwsku and platform, and PORT, are needed for a factory config)"
        )
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "sonic",
                "hwsku": meta["hwsku"],
                "platform": meta["platform"],
                "mac": f"00:00:5e:00:53:{index % 256:02x}",
            }
        },
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up"}},
        "PORT": {k: {f: v for f, v in e.items() if f in PORT_PLATFORM_FIELDS} for k, e in rendered["PORT"].items()},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": PFCWD_POLL_INTERVAL}},
        "FEATURE": {"bgp": {"state": "enabled"}},
    }


def rendered_config(lab: Lab, device: str) -> dict[str, Any]:
    """``device``'s config_db.json in the lab's render folder.

    Raises:
        LabError: the file is missing or unreadable.
    """
    path = lab.render_dir / "switches" / device / "config_db.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabError(f"{path}: the lab's rendered config of {device} is not readable ({exc})") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: not a config_db object")
    return data


def _releases(lab: Lab) -> dict[str, str]:
    """Each switch's SONiC release as the plan records it (``plan.json`` switches.<name>.sonic_release)."""
    try:
        plan = json.loads((lab.render_dir / "plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    switches = plan.get("switches") if isinstance(plan, dict) else None
    if not isinstance(switches, dict):
        return {}
    return {n: str(s["sonic_release"]) for n, s in switches.items() if isinstance(s, dict) and s.get("sonic_release")}


def prepare(lab: Lab) -> dict[str, Switch]:
    """Every switch's SONiC tools and image facts (written once; a second call changes nothing); the switches."""
    releases = _releases(lab)
    out: dict[str, Switch] = {}
    for name in lab.switches:
        write_wrappers(lab.folder, name)
        sw = Switch.of_lab(lab.folder, name)
        if not sw.state.version_file.exists():
            release = releases.get(name) or default_release()
            sw.state.write_version(
                SonicVersion(
                    asic_type=asic_type(rendered_config(lab, name)),
                    build_version=build_version(release),
                    release=release,
                )
            )
        out[name] = sw
    return out


def reset(lab: Lab, *, log: Log = lambda _: None) -> float:
    """Make every switch of ``lab`` a freshly installed one (module docstring); the seconds it took.

    Everything is read and checked first (each switch's factory config must be derivable); then the switches are
    reset in parallel.

    Raises:
        LabError: a rendered config is unusable (nothing changed), or resetting a switch failed.
    """
    t0 = time.monotonic()
    configs = {n: factory_config(rendered_config(lab, n), i) for i, n in enumerate(lab.switches)}
    switches = prepare(lab)

    def one(name: str) -> None:
        sw = switches[name]
        with sw.state.locked():
            sw.state.reset(configs[name])
            if sw.frr is not None:
                sw.frr.apply(configs[name])

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {n: pool.submit(one, n) for n in switches}
    failed = {n: f.exception() for n, f in futures.items() if f.exception() is not None}
    if failed:
        name, exc = next(iter(failed.items()))
        raise LabError(f"reset failed on {len(failed)} switch(es), first {name}: {exc}")
    seconds = time.monotonic() - t0
    log(f"lab {lab.name}: {len(switches)} switches reset to their factory config (no BGP) in {seconds:.1f} s")
    return seconds


def state_dirs(lab: Lab) -> dict[str, Path]:
    """Each switch's SONiC state folder (its device folder)."""
    return {n: lab.layout.dev_dir(n) for n in lab.switches}
