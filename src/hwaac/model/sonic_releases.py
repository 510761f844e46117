"""SONiC releases the intent can name, what differs between them for hwaac's config_db, and the rule on them.

Each :class:`SonicRelease` records the facts where SONiC's own code paths disagree (YANG models, frrcfgd at run
time, frrcfgd's boot templates); the renderer follows them and :func:`check_sonic` refuses a choice that cannot
satisfy both. Sources, per release branch of sonic-buildimage and sonic-utilities: docs/sonic-releases.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from hwaac.errors import IntentIssue

if TYPE_CHECKING:
    from hwaac.model.intent import Intent

ReleaseName = Literal["202305", "202311", "202405", "202411", "202505", "202511"]
BgpAdminStatusPath = Literal["frrcfgd", "yang"]
DEFAULT_RELEASE: ReleaseName = "202505"
ROLES = ("leaf", "spine", "super_spine")


@dataclass(frozen=True, slots=True)
class SonicRelease:
    """What hwaac's rendering depends on in one SONiC release.

    Attributes:
        name: the release branch, e.g. ``"202505"``.
        frrcfgd_up_down: frrcfgd maps BGP_NEIGHBOR(_AF) ``admin_status`` ``up``/``down`` at run time (202505+,
            ``hdl_admin_status``); before, only ``true``/``false`` (anything else is skipped: no ``activate``).
        bgp_router_id_field: sonic-device_metadata.yang defines DEVICE_METADATA ``bgp_router_id`` (202405+).
        reload_checks_yang: which files ``config reload`` checks against YANG: ``"all"`` (202505+), ``"golden"``
            (only file names containing "golden", 202405/202411) or ``"none"``.
    """

    name: str
    frrcfgd_up_down: bool
    bgp_router_id_field: bool
    reload_checks_yang: Literal["all", "golden", "none"]


RELEASES: dict[str, SonicRelease] = {
    r.name: r
    for r in (
        SonicRelease("202305", frrcfgd_up_down=False, bgp_router_id_field=False, reload_checks_yang="none"),
        SonicRelease("202311", frrcfgd_up_down=False, bgp_router_id_field=False, reload_checks_yang="none"),
        SonicRelease("202405", frrcfgd_up_down=False, bgp_router_id_field=True, reload_checks_yang="golden"),
        SonicRelease("202411", frrcfgd_up_down=False, bgp_router_id_field=True, reload_checks_yang="golden"),
        SonicRelease("202505", frrcfgd_up_down=True, bgp_router_id_field=True, reload_checks_yang="all"),
        SonicRelease("202511", frrcfgd_up_down=True, bgp_router_id_field=True, reload_checks_yang="all"),
    )
}

RULES: dict[str, str] = {
    "sonic-bgp-admin-status-conflict": "on a SONiC release whose frrcfgd reads BGP admin_status only as true/false "
    "(before 202505) the intent chooses sonic_bgp_admin_status",
    "sonic-bgp-admin-status-needless": "sonic_bgp_admin_status frrcfgd is only for releases before 202505",
}

CONFLICT_VALID = (
    "sonic_bgp_admin_status frrcfgd (admin_status true/false: sessions and address families come up, "
    "but GCU 'config apply-patch' refuses every patch while the config holds them) or yang (up/down: "
    "YANG-valid, but frrcfgd does not activate the address family, so the session carries no routes); "
    "or a sonic_release of 202505 or later"
)


def bgp_admin_values(release: str, path: BgpAdminStatusPath | None) -> tuple[str, str]:
    """The BGP_NEIGHBOR(_AF) ``admin_status`` values (up, down) to render for ``release``.

    ``path`` "yang" -> ``("up", "down")``, "frrcfgd" -> ``("true", "false")``; None -> ``("up", "down")`` where
    frrcfgd maps them (202505+).

    Raises:
        ValueError: ``path`` is None on a release before 202505 (rule ``sonic-bgp-admin-status-conflict``).
    """
    if path == "frrcfgd":
        return "true", "false"
    if path == "yang" or RELEASES[release].frrcfgd_up_down:
        return "up", "down"
    raise ValueError(
        f"SONiC {release}: BGP admin_status has no value both frrcfgd and YANG accept; set {CONFLICT_VALID}"
    )


def check_sonic(intent: Intent) -> list[IntentIssue]:
    """Issues of the per-role SONiC settings: a release before 202505 without ``sonic_bgp_admin_status``, and
    ``frrcfgd`` on a release that does not need it."""
    issues = []
    for role in ROLES:
        spec = getattr(intent.switches, role)
        if spec is None:
            continue
        rel = RELEASES[spec.sonic_release]
        base = f"switches.{role}"
        if not rel.frrcfgd_up_down and spec.sonic_bgp_admin_status is None:
            issues.append(
                IntentIssue(
                    f"{base}.sonic_release",
                    f"SONiC {rel.name}: frrcfgd activates a BGP address family only with admin_status 'true' and "
                    "SONiC's YANG models (GCU, config reload) accept only 'up'/'down'; no value satisfies both",
                    rel.name,
                    f"set {base}.{CONFLICT_VALID}",
                    rule="sonic-bgp-admin-status-conflict",
                )
            )
        elif rel.frrcfgd_up_down and spec.sonic_bgp_admin_status == "frrcfgd":
            issues.append(
                IntentIssue(
                    f"{base}.sonic_bgp_admin_status",
                    f"SONiC {rel.name}'s frrcfgd reads up/down itself; 'frrcfgd' would only make the config "
                    "YANG-invalid (GCU refuses every patch)",
                    "frrcfgd",
                    "yang, or leave the field out",
                    rule="sonic-bgp-admin-status-needless",
                )
            )
    return issues
