"""Who decides a patch on a lab switch: SONiC's own generic config updater, or hwaac's validator without it.

With the SONiC toolkit (``HWAAC_SONIC_TOOLKIT``), :func:`decide` runs GCU's ``config apply-patch --dry-run`` on the
switch's running config (:func:`hwaac.sonic_toolkit.gcu_dryrun`, with the switch's ASIC type and build version):
GCU accepts or refuses, and its resulting config is what the switch then runs. Without the variable, the patch is
applied with the jsonpatch library (the one GCU uses) and the result must pass GCU's empty-table rule and
:func:`hwaac.render.sonic.validate_config_db`; the decision then says that SONiC's GCU did not judge it. A toolkit
that is named but unusable is an error, never a silent fallback.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import jsonpointer

from hwaac.lab.errors import LabError
from hwaac.lab.sonic_state import SonicVersion

NOT_JUDGED = (
    "HWAAC_SONIC_TOOLKIT is not set: SONiC's generic config updater did not judge this {what}; it was "
    "applied with the jsonpatch library{checked} (set HWAAC_SONIC_TOOLKIT to the SONiC toolkit for "
    "SONiC's own verdict)"
)


class PatchRefused(LabError):
    """The patch is refused; ``kind`` says why (GCU's kinds: yang, no-yang, empty-table, illegal-op, patch,
    format, device, other; ``hwaac`` for hwaac's validator)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Decision:
    """An accepted patch: the running config after it, the changes in the order applied, who judged it."""

    config: dict[str, Any]
    changes: tuple[list[dict[str, Any]], ...]
    judge: str  # "gcu" or "jsonpatch"
    seconds: float
    warnings: tuple[str, ...] = field(default=())


def toolkit_named(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``HWAAC_SONIC_TOOLKIT`` names a toolkit (then GCU decides)."""
    return bool((os.environ if environ is None else environ).get("HWAAC_SONIC_TOOLKIT"))


def decide(
    running: Mapping[str, Any],
    patch: Sequence[Mapping[str, Any]],
    version: SonicVersion,
    *,
    extra_args: Iterable[str] = (),
    validate: bool = True,
    what: str = "patch",
) -> Decision:
    """The config ``patch`` leads to on a switch running ``running``, if it is accepted.

    Args:
        running: the switch's running CONFIG_DB.
        patch: RFC 6902 operations (GCU's CONFIGDB format).
        version: the switch's image facts (GCU gates PFC_WD and buffer changes on them).
        extra_args: ``sonic-gcu-dryrun`` options (``--ignore-non-yang-tables``, ``--ignore-path P``).
        validate: without the toolkit, check the result with hwaac's validator (a rollback to a checkpoint the
            switch ran before is not checked again).
        what: "patch", "rollback", ... for the messages.

    Raises:
        PatchRefused: GCU (or, without the toolkit, jsonpatch or hwaac's validator) refuses it.
        LabError: the toolkit is named but cannot be used.
    """
    if toolkit_named():
        return _gcu(running, patch, version, list(extra_args))
    return _fallback(running, patch, validate=validate, what=what)


def _gcu(
    running: Mapping[str, Any], patch: Sequence[Mapping[str, Any]], version: SonicVersion, extra_args: list[str]
) -> Decision:
    from hwaac.sonic_toolkit import ToolkitError, gcu_dryrun

    try:
        res = gcu_dryrun(
            running,
            [dict(op) for op in patch],
            asic_type=version.asic_type,
            build_version=version.build_version,
            extra_args=extra_args,
        )
    except ToolkitError as exc:
        raise LabError(f"SONiC's generic config updater could not run: {exc}") from None
    if not res.accepted or res.config is None:
        lines = [res.error or f"refused ({res.kind})", *res.details]
        raise PatchRefused("\n".join(lines), res.kind or "other")
    return Decision(config=res.config, changes=tuple(res.changes), judge="gcu", seconds=res.seconds)


def _fallback(running: Mapping[str, Any], patch: Sequence[Mapping[str, Any]], *, validate: bool, what: str) -> Decision:
    t0 = time.monotonic()
    try:
        target = jsonpatch.apply_patch(copy.deepcopy(dict(running)), [dict(op) for op in patch])
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as exc:
        raise PatchRefused(f"patch does not apply: {exc}", "patch") from None
    empty = sorted(t for t, v in target.items() if isinstance(v, dict) and not v)
    if empty:
        # generic_updater.py PatchApplier.apply: empty tables do not show up in ConfigDb
        raise PatchRefused(
            f"given patch is not valid because it will result in empty tables which is not allowed "
            f"in ConfigDb. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}",
            "empty-table",
        )
    if validate:
        from hwaac.render.sonic.validate import validate_config_db

        errors = validate_config_db(target)
        if errors:
            raise PatchRefused(
                "hwaac's validator (hwaac.render.sonic.validate_config_db) refuses the resulting "
                "config:\n" + "\n".join(errors),
                "hwaac",
            )
    checked = " after hwaac's validator accepted the result" if validate else ""
    return Decision(
        config=target,
        changes=tuple([dict(op)] for op in patch),
        judge="jsonpatch",
        seconds=time.monotonic() - t0,
        warnings=(NOT_JUDGED.format(what=what, checked=checked),),
    )


def replace_patch(running: Mapping[str, Any], target: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The patch from ``running`` to ``target``, as GCU's Config Replacer makes it (``jsonpatch.make_patch``,
    sonic-utilities generic_config_updater/gu_common.py ``PatchWrapper.generate_patch``)."""
    return list(jsonpatch.make_patch(dict(running), dict(target)))
