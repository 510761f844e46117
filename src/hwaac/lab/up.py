"""``hwaac lab up``: build a lab from a rendered folder, recording each step in lab.json before taking it.

Order: everything that can refuse the input (the render, every switch's FRR config, every host's files, the
tool versions) is read first, before anything is made; then namespaces, neighbour-table limits, sysctls,
veths, addresses, host networking, wrappers, lldpd, FRR, and last the switch ports up. A failure part way
tears down what was made.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hwaac.apply.bgp import parse_bgp_summary
from hwaac.lab import frr, ksm, lldp, neigh, netns, rcvbuf, wrappers
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.fabric import Fabric, Switch, read_fabric
from hwaac.lab.frr_config import frr_config, neighbors
from hwaac.lab.hosts import HostFiles, apply_network, apply_sysctls, read_host_files
from hwaac.lab.layout import Layout
from hwaac.lab.manifest import STATE_FILE, lab_dir, locked, new_state, read_state, write_state
from hwaac.lab.names import check_lab_name, default_lab_name, lab_prefix, netns_name, state_root
from hwaac.lab.procs import run
from hwaac.lab.sysctl import SWITCH_SYSCTLS, set_in_netns
from hwaac.lab.vty import query

Log = Callable[[str], None]
WAVE_TIMEOUT = 60.0
# spines brought up at once in a big lab: each group makes every leaf re-install its routes once (a wider ECMP
# set); one at a time made 32 such storms on su16, eight at a time left sessions short of Established after 60 s
SPINES_PER_WAVE = 4
WORKERS = max(2, min(8, (os.cpu_count() or 2) * 2))
# above this many BGP sessions KSM merges bgpd's zero-filled pages while the lab is up: in a demo-sized lab they
# are a few hundred MiB, in a 16-SU lab more than half of its 9 GiB (docs/lab.md)
MERGE_ABOVE_SESSIONS = frr.BIG_LAB_SESSIONS


def up(
    render_dir: Path,
    *,
    name: str | None = None,
    nodes_per_su: int | None = -1,
    root: Path | None = None,
    log: Log = lambda _: None,
) -> Lab:
    """Build the lab (or return it when the same render is already up: a second run changes nothing).

    Raises:
        LabError: bad input or a missing tool (nothing made), or a step failed (what was made is removed).
    """
    root = root or state_root()
    t0 = time.monotonic()
    versions = {"frr": frr.version(), "lldpd": lldp.version()}
    fab = read_fabric(Path(render_dir), nodes_per_su)
    lab = check_lab_name(name or default_lab_name(fab.name))
    folder = lab_dir(lab, root)
    if (folder / STATE_FILE).exists():
        state = read_state(folder)
        if state.get("render_dir") == str(fab.render_dir) and state.get("phase") == "up":
            log(f"lab {lab} is already up from {fab.render_dir}")
            return Lab(folder, state)
        raise LabError(
            f"lab {lab} already exists (phase {state.get('phase')}, from {state.get('render_dir')}): "
            f"`hwaac lab down {lab}` first, or choose another --name"
        )
    left = netns.existing(lab_prefix(lab))
    if folder.exists() and not left:
        left = [str(folder)]
    if left:
        raise LabError(
            f"lab {lab} has no state but leftovers ({left[0]}{', ...' if len(left) > 1 else ''}): "
            f"`hwaac lab down {lab}` removes them"
        )
    for sw in fab.switches.values():
        frr_config(sw.config_db)  # refuses what bgpd could not run, before anything is made
    host_files = {n: read_host_files(h) for n, h in fab.hosts.items()}
    log(
        f"lab {lab}: {len(fab.switches)} switches, {len(fab.hosts)} of {fab.nodes_total} nodes, "
        f"{len(fab.cables)} cables (FRR {versions['frr']}, lldpd {versions['lldpd']})"
    )
    folder.mkdir(parents=True)
    os.chmod(root, 0o755)
    os.chmod(folder, 0o755)
    state = new_state(lab, fab.name, fab.render_dir)
    state["versions"] = versions
    state["bgp_neighbors"] = {
        n: {a: nbr["enabled"] for a, nbr in neighbors(sw.config_db).items()} for n, sw in fab.switches.items()
    }
    try:
        with locked(folder):
            _build(folder, state, fab, host_files, log)
    except BaseException as exc:
        from hwaac.lab.down import down

        try:
            down(lab, root=root)
        except LabError as again:
            raise LabError(f"{exc}; removing the half-made lab failed too: {again}") from exc
        if isinstance(exc, LabError):
            raise LabError(f"lab {lab}: {exc} (the half-made lab was removed)") from exc
        raise
    log(f"lab {lab} up in {time.monotonic() - t0:.1f} s (state {folder})")
    return Lab(folder, state)


def _build(folder: Path, state: dict[str, Any], fab: Fabric, host_files: dict[str, HostFiles], log: Log) -> None:
    layout = Layout(folder)
    lab = state["name"]
    ns = {d: netns_name(lab, d) for d in [*fab.switches, *fab.hosts]}
    state["devices"] = {
        **{n: {"kind": "switch", "role": sw.role, "netns": ns[n]} for n, sw in fab.switches.items()},
        **{n: {"kind": "host", "role": h.kind, "netns": ns[n], "su": h.su} for n, h in fab.hosts.items()},
    }
    write_state(folder, state)
    state["neigh_sysctl"] = neigh.raise_for(len(fab.cables))
    write_state(folder, state)
    t = time.monotonic()
    netns.add(ns.values())
    _parallel(
        [lambda n=n: set_in_netns(ns[n], SWITCH_SYSCTLS) for n in fab.switches]
        + [lambda n=n: apply_sysctls(ns[n], host_files[n]) for n in fab.hosts]
    )
    state["host_sysctl"] = _host_sysctl_summary(host_files)
    state["links"] = {
        c.id: {"kind": c.kind, "a": list(c.a), "b": list(c.b), "addrs": list(c.addrs)} for c in fab.cables.values()
    }
    write_state(folder, state)
    netns.batch(
        [
            netns.veth_line(ns[c.a[0]], c.a[1], _mtu(fab, *c.a), ns[c.b[0]], c.b[1], _mtu(fab, *c.b))
            for c in fab.cables.values()
        ]
    )
    cabled: dict[str, list[str]] = {}
    for c in fab.cables.values():
        for dev, port in (c.a, c.b):
            cabled.setdefault(dev, []).append(port)
    on_lo = bool(fab.switches) and not _dummy_works(ns[next(iter(fab.switches))])
    state["loopbacks_on"] = "lo" if on_lo else "dummy"
    _parallel(
        [
            lambda n=n: netns.batch(_switch_lines(fab.switches[n], cabled.get(n, []), on_lo), netns=ns[n])
            for n in fab.switches
        ]
        + [lambda n=n: apply_network(ns[n], fab.hosts[n], host_files[n], cabled.get(n, [])) for n in fab.hosts]
    )
    log(
        f"  {len(ns)} namespaces, {len(fab.cables)} veth pairs, addresses and host routing: "
        f"{time.monotonic() - t:.1f} s"
    )
    t = time.monotonic()
    sessions = sum(1 for c in fab.cables.values() if c.a[0] in fab.switches and c.b[0] in fab.switches)
    floor = frr.timers_floor(sessions)
    state["bgp_timers_floor"] = list(floor) if floor else None
    if floor:
        log(f"  {sessions} BGP sessions: keepalive/hold at least {floor[0]}/{floor[1]} s")
    for n in fab.switches:
        wrappers.write(layout, n, ns[n], frr=True)
        frr.write_configs(layout, n, fab.switches[n].config_db, floor)
    for n in fab.hosts:
        wrappers.write(layout, n, ns[n], frr=False)
        layout.dev_dir(n).mkdir(parents=True, exist_ok=True)
    daemons: dict[str, dict[str, Any]] = state["daemons"]

    def start_switch(n: str) -> None:
        daemons.setdefault(n, {}).update(frr.start(layout, n, ns[n]))

    def start_lldp(n: str) -> None:
        daemons.setdefault(n, {})["lldpd"] = lldp.start(layout, n, ns[n], cabled.get(n, []), interval)

    interval = lldp.tx_interval(2 * len(fab.cables))
    state["lldp_tx_interval"] = interval

    # lldpd first: it starts in milliseconds while nothing else competes for the CPU; with room for the
    # notifications of all its ports coming up at once (hwaac.lab.rcvbuf)
    try:
        with rcvbuf.raised():
            _parallel([functools.partial(start_lldp, n) for n in ns])
            _parallel([functools.partial(lldp.wait_ready, layout, n) for n in ns])
    finally:
        write_state(folder, state)
    log(f"  lldpd in {len(ns)} namespaces: {time.monotonic() - t:.1f} s")
    # a big lab: ksmd merges bgpd's zero-filled pages while the daemons start and exchange their first updates,
    # and goes on slowly while the lab is up (hwaac.lab.ksm; down puts the machine's settings back)
    with ksm.merging() if sessions > MERGE_ABOVE_SESSIONS else contextlib.nullcontext(False) as merging:
        if merging:
            state["ksm"] = True
            log("  KSM merges the daemons' zero-filled pages while the lab is up")
        _start_and_connect(folder, state, fab, ns, cabled, start_switch, in_waves=bool(floor), log=log)
    state["phase"] = "up"
    write_state(folder, state)


def _start_and_connect(
    folder: Path,
    state: dict[str, Any],
    fab: Fabric,
    ns: dict[str, str],
    cabled: dict[str, list[str]],
    start_switch: Callable[[str], None],
    *,
    in_waves: bool,
    log: Log,
) -> None:
    """zebra and bgpd on every switch, then the switch ports up (the spines in waves when ``in_waves``)."""
    t = time.monotonic()
    try:
        _parallel([functools.partial(start_switch, n) for n in fab.switches])
    finally:
        write_state(folder, state)
    log(f"  zebra and bgpd in {len(fab.switches)} switches: {time.monotonic() - t:.1f} s")
    # the switch ports come up last, all at once: no daemon starts while others already converge (on a few
    # cores that starved bgpd into hold-timer expiries), and every session starts from the same moment
    t = time.monotonic()
    waves = [n for n, sw in fab.switches.items() if sw.role != "leaf"] if in_waves else []

    def ports_up(n: str) -> None:
        netns.batch(_ports_up(fab.switches[n], cabled.get(n, [])), netns=ns[n])

    _parallel([functools.partial(ports_up, n) for n in fab.switches if n not in waves])
    # a big lab: the spines a few at a time, each group once the previous one's sessions are up, so the initial
    # update storm of thousands of sessions never lands on the cores at once (docs/lab.md)
    for i in range(0, len(waves), SPINES_PER_WAVE):
        group = waves[i : i + SPINES_PER_WAVE]
        for n in group:
            netns.batch(_ports_up(fab.switches[n], cabled.get(n, [])), netns=ns[n])
        for n in group:
            want = sum(1 for ok in state["bgp_neighbors"].get(n, {}).values() if ok)
            if not _wait_established(ns[n], want, WAVE_TIMEOUT):
                log(f"  {n}: not {want} sessions up within {WAVE_TIMEOUT:.0f} s; next spines")
    how = f" ({len(waves)} spines, {SPINES_PER_WAVE} at a time)" if waves else ""
    log(f"  switch ports up{how}: {time.monotonic() - t:.1f} s")


def _parallel(jobs: Sequence[Callable[[], None]]) -> None:
    """Run the jobs on a few threads (each mostly waits on a child process); the first error is raised after all
    jobs ended."""
    if not jobs:
        return
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = [pool.submit(j) for j in jobs]
    errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:
        raise errors[0]  # type: ignore[misc]


def _mtu(fab: Fabric, dev: str, port: str) -> int | None:
    sw = fab.switches.get(dev)
    return sw.ports[port].mtu if sw else None


def _wait_established(ns: str, want: int, timeout: float) -> bool:
    """Whether ``want`` sessions of the bgpd in ``ns`` are Established within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            peers = parse_bgp_summary(query(ns, "bgpd", "show bgp summary json") or "{}").peers
            if sum(1 for st in peers.values() if st == "Established") >= want:
                return True
        except (LabError, ValueError):
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)


def _dummy_works(ns: str) -> bool:
    """Whether the kernel has dummy interfaces (a kernel without CONFIG_DUMMY says "Unknown device type")."""
    probe = run(["ip", "-n", ns, "link", "add", "hwl-probe", "type", "dummy"], check=False, timeout=30)
    if probe.returncode == 0:
        run(["ip", "-n", ns, "link", "del", "hwl-probe"], timeout=30)
    return probe.returncode == 0


def _switch_lines(sw: Switch, ports: list[str], on_lo: bool) -> list[str]:
    """A switch's loopbacks (dummy interfaces named as in config_db, or addresses on ``lo`` when the kernel has
    no dummy interfaces) and the addresses and admin state of its cabled ports."""
    lines: list[str] = []
    for lo, addrs in sw.loopbacks.items():
        if on_lo:
            lines += [f"address add {a} dev lo" for a in addrs]
            continue
        lines.append(f"link add {lo} type dummy")
        lines += [f"address add {a} dev {lo}" for a in addrs]
        lines.append(f"link set dev {lo} up")
    for port in sorted(ports):
        lines += [f"address add {a} dev {port}" for a in sw.ports[port].addresses]
    return lines


def _ports_up(sw: Switch, ports: list[str]) -> list[str]:
    """The cabled ports whose config_db admin_status is up, brought up."""
    return [f"link set dev {port} up" for port in sorted(ports) if sw.ports[port].admin_up]


def _host_sysctl_summary(files: dict[str, HostFiles]) -> dict[str, Any]:
    applied = sorted({k for f in files.values() for k, _ in f.sysctl_applied})
    skipped: dict[str, str] = {}
    for f in files.values():
        skipped.update(f.sysctl_skipped)
    return {"applied": applied, "skipped": dict(sorted(skipped.items()))}
