# Copyright: hwaac maintainers
# Apache-2.0
"""One device's run of the aiinfra.hwaac.mlxconfig module: query, set only what differs, verify, say what reset the
values need. Standard library only (host side); the formats are read by module_utils/mlxconfig.py.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlxconfig import (
    NEXT_BOOT,
    RESET_POWER_CYCLE,
    RESET_SKIPPED,
    MlxconfigError,
    QueryOutput,
    array_range,
    check_name,
    parse_query,
    parse_set_result,
    set_token,
    split_indexed,
    strongest_reset,
    unknown_params_in,
    value_matches,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.per_item import ItemFailure
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_recorded


def prepare(device: str, params: dict, array_params: list[str]) -> dict[str, str]:
    """Check the names and values of one device before anything runs; returns ``NAME -> set token``.

    Raises :class:`MlxconfigError` naming the bad name or value.
    """
    for name in [*params, *array_params]:
        check_name(name)
    return {name: set_token(value) for name, value in params.items()}


def boot_id(path: str) -> str:
    """The current boot id, or "" when it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


class DeviceRun:
    """Query, set and verify the parameters of one device; every mlxconfig output is kept for ``raw``.

    An item of :class:`PerItem`: errors raise :class:`ItemFailure`; ``would_set`` and ``applied`` tell how far the
    run came. ``p`` holds the module's options (fw_reset_after_config, state_dir, boot_id_path); ``executable`` is
    set once every device has passed its checks.
    """

    def __init__(self, module: Any, device: str, desired: dict, array_params: list, p: dict) -> None:
        self.module = module
        self.p = p
        self.executable = ""
        self.device = device
        self.name = device
        self.tokens: dict[str, str] | None = None  # NAME -> set token, once the checks passed
        self.desired: dict[str, object] = dict(desired)
        self.array_params: list[str] = list(array_params)
        self.raw: list[str] = []
        self.would_set: dict[str, str] = {}
        self.applied: dict[str, str] = {}  # set by this run and seen in Next Boot
        self.wrote = False  # mlxconfig accepted a set on this device
        self.changes: dict[str, dict[str, str]] = {"before": {}, "after": {}}

    def fail(self, msg: str, **kw: object) -> None:
        raise ItemFailure(msg, **kw)

    def check(self) -> None:
        try:
            self.tokens = prepare(self.device, self.desired, self.array_params)
        except MlxconfigError as exc:
            self.fail(str(exc))

    def diff(self) -> dict[str, dict[str, str]]:
        return self.changes

    def run(self, args: list[str]) -> tuple[int, str]:
        ran = run_recorded(self.module, [self.executable, *args], self.raw)
        return ran.rc, ran.text

    def query(self, names: list[str]) -> QueryOutput:
        """``mlxconfig -d DEV -e q NAMES``: parsed; unknown names and tool errors fail the device."""
        rc, text = self.run(["-d", self.device, "-e", "q", *names])
        unknown = unknown_params_in(text)
        if unknown:
            self.fail(
                f"unknown mlxconfig parameter {', '.join(unknown)} on {self.device} (mlxconfig: "
                f"'-E- Unknown Parameter: {unknown[0]}')",
                unknown_params=unknown,
            )
        try:
            parsed = parse_query(text)
        except MlxconfigError as exc:
            self.fail(f"mlxconfig query on {self.device} failed (rc={rc}): {exc}")
        if rc != 0:
            self.fail(f"mlxconfig query on {self.device} exited {rc}")
        return parsed

    def read_all(self, bases: list[str], arrays_wanted: set[str]) -> dict[str, dict[str, str]]:
        """Query ``bases`` (scalar names and array base names), then expand arrays with ``NAME[lo..hi]``.

        Returns ``{name: {column: raw}}`` for scalars and ``NAME[i]`` elements.
        """
        first = self.query(bases)
        rows: dict[str, dict[str, str]] = {}
        expand: list[str] = []
        for name in bases:
            if name not in first.rows:
                self.fail(f"mlxconfig did not report {name} on {self.device} (not supported by this firmware?)")
            rng = array_range(first.rows[name].get(NEXT_BOOT, ""))
            if rng:
                if name in arrays_wanted:
                    expand.append(f"{name}[{rng[0]}..{rng[1]}]")
                else:
                    rows[name] = first.rows[name]  # an array asked for as a scalar: reported, refused later
            else:
                rows[name] = first.rows[name]
        if expand:
            rows.update(self.query(expand).rows)
        return rows

    def apply(self) -> dict:
        """Bring the device to the desired values; returns its result (the fields of the single-device form)."""
        tokens = self.tokens or {}
        p = self.p
        device = self.device
        desired = self.desired
        check_mode = self.module.check_mode
        arrays_wanted = {split_indexed(n)[0] for n in desired if split_indexed(n)[1] is not None}
        arrays_wanted.update(self.array_params)
        bases = sorted({split_indexed(n)[0] for n in desired} | set(self.array_params))
        if not bases:
            return {
                "device": device,
                "changed": False,
                "set": {},
                "would_set": {},
                "reboot_required": False,
                "reset_required": "none",
                "reset_reason": "no parameters managed",
                "pending": {},
                "query": {},
                "raw": [],
            }

        before = self.read_all(bases, arrays_wanted)
        for name in desired:
            if name not in before:
                base, idx = split_indexed(name)
                if idx is not None and base in before:
                    self.fail(f"{base} is not an array on {device}; give it without an index")
                rng = [r for r in before if split_indexed(r)[0] == base]
                self.fail(f"{name} is out of range on {device} (elements: {', '.join(rng) or 'none'})")
            if array_range(before[name].get(NEXT_BOOT, "")):
                self.fail(f"{name} is an array ({before[name][NEXT_BOOT]}) on {device}; set its elements as {name}[i]")

        # compare with Next Boot: a value already pending is not set again
        would_set = {n: tokens[n] for n in desired if not value_matches(desired[n], before[n][NEXT_BOOT])}
        self.would_set = would_set
        self.changes = {
            "before": {n: before[n][NEXT_BOOT] for n in sorted(desired)},
            "after": {n: (str(desired[n]) if n in would_set else before[n][NEXT_BOOT]) for n in sorted(desired)},
        }

        after = before
        reset_hint = ""
        reset_msg = ""
        if would_set and not check_mode:
            rc, text = self.run(["-y", "-d", device, "set", *[f"{n}={v}" for n, v in sorted(would_set.items())]])
            unknown = unknown_params_in(text)
            if unknown:
                self.fail(f"unknown mlxconfig parameter {', '.join(unknown)} on {device}", unknown_params=unknown)
            if rc != 0:
                self.fail(f"mlxconfig set on {device} failed (rc={rc})")
            self.wrote = True
            try:
                reset_hint, reset_msg = parse_set_result(text)
            except MlxconfigError as exc:
                self.fail(f"mlxconfig set on {device}: {exc}")
            after = self.read_all(bases, arrays_wanted)
            not_applied = {
                n: after[n][NEXT_BOOT] for n in would_set if not value_matches(desired[n], after[n][NEXT_BOOT])
            }
            self.applied = {n: v for n, v in would_set.items() if n not in not_applied}
            if not_applied:
                names = ", ".join(
                    f"{n} (wanted {desired[n]!s}, Next Boot is {v})" for n, v in sorted(not_applied.items())
                )
                self.fail(
                    f"mlxconfig accepted the set on {device} but did not apply: {names}",
                    not_applied=sorted(not_applied),
                )
        did_set = dict(self.applied)

        has_current = all("Current" in after[n] for n in desired)
        pending: dict[str, dict[str, str]] = {}
        for n in sorted(desired) if has_current else []:
            if check_mode and n in would_set:
                # predicted: Next Boot would become the desired value
                if not value_matches(desired[n], after[n]["Current"]):
                    pending[n] = {"current": after[n]["Current"], "next_boot": str(desired[n])}
            elif after[n]["Current"] != after[n][NEXT_BOOT]:
                pending[n] = {"current": after[n]["Current"], "next_boot": after[n][NEXT_BOOT]}
        reboot_required = bool(pending) if has_current else bool(did_set or (check_mode and would_set))

        reset_required, reset_reason = "none", "no managed parameter is pending"
        if reboot_required:
            reset_required, reset_reason = "reboot", "values are pending in Next Boot; mlxconfig asks for a reboot"
            if not has_current:
                reset_reason = (
                    "values were set; this firmware does not report Current values, assume a reboot is needed"
                )
            if reset_hint == RESET_POWER_CYCLE:
                reset_required, reset_reason = "power_cycle", f"mlxconfig: {reset_msg}"
            elif reset_hint == RESET_SKIPPED:
                reset_required = "power_cycle"
                reset_reason = (
                    f"mlxconfig: {reset_msg} (BlueField in DPU mode: a host power cycle loads the values, "
                    "k8snetworkplumbingwg/sriov-network-operator#662)"
                )
            if p["fw_reset_after_config"]:
                reset_required = "mlxfwreset"
                reset_reason = (
                    "fw_reset_after_config: a warm reboot does not load new firmware values on this host "
                    "(nic-configuration-operator FW_RESET_AFTER_CONFIG_UPDATE)"
                )

        # Pending values that survived a reboot: record the boot id when values become pending; if the same values
        # are still pending under a different boot id, the reboot did not load them (the DGX case,
        # nic-configuration-operator PRs #188/#189) and only mlxfwreset (or a power cycle) will.
        if p["state_dir"] and has_current:
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in device)
            state_file = os.path.join(p["state_dir"], f"{safe}.json")
            now = boot_id(p["boot_id_path"])
            recorded: dict = {}
            if os.path.exists(state_file):
                try:
                    with open(state_file, encoding="utf-8") as fh:
                        recorded = json.load(fh)
                except (OSError, ValueError):
                    recorded = {}
            same_values = recorded.get("pending") == pending
            if pending and same_values and now and recorded.get("boot_id") and recorded["boot_id"] != now:
                reset_required = "mlxfwreset"
                reset_reason = (
                    f"the same values were already pending before the last reboot (boot id "
                    f"{recorded['boot_id']}, now {now}): a warm reboot did not load them; run "
                    f"'mlxfwreset -d {device} reset' or power cycle"
                )
            if not check_mode:
                if pending and not same_values:
                    os.makedirs(p["state_dir"], exist_ok=True)
                    with open(state_file, "w", encoding="utf-8") as fh:
                        json.dump({"boot_id": now, "pending": pending}, fh, sort_keys=True)
                elif not pending and os.path.exists(state_file):
                    os.remove(state_file)

        query = {n: {k.lower().replace(" ", "_"): v for k, v in after[n].items()} for n in sorted(after)}
        return {
            "device": device,
            "changed": bool(did_set) or (check_mode and bool(would_set)),
            "set": did_set,
            "would_set": would_set,
            "reboot_required": reboot_required,
            "reset_required": reset_required,
            "reset_reason": reset_reason,
            "pending": pending,
            "query": query,
            "raw": self.raw,
        }

    def failure(self, exc: ItemFailure) -> dict:
        """The result of a device that failed: what was found and done up to the failure."""
        return {
            "device": self.device,
            "failed": True,
            "msg": exc.msg,
            "changed": self.wrote,
            "set": dict(self.applied),
            "would_set": self.would_set,
            "raw": self.raw,
            **exc.extra,
        }

    def failure_alone(self, exc: ItemFailure) -> dict:
        """The single form's failure: what mlxconfig printed, unless the checks failed before anything ran."""
        return {} if self.tokens is None else {"raw": self.raw, **exc.extra}


def combine(results: list[dict]) -> dict:
    """The top-level fields of the list form: ``changed``, ``reboot_required``, ``reset_required`` (the strongest)
    and ``reset_reason``, over every device that did not fail (the module adds ``diff``)."""
    ok = [r for r in results if not r.get("failed")]
    reset_required = strongest_reset([r["reset_required"] for r in ok])
    if reset_required == "none":
        reset_reason = "no managed parameter is pending"
    else:
        reset_reason = "; ".join(
            f"{r['device']}: {r['reset_reason']}" for r in ok if r["reset_required"] == reset_required
        )
    return {
        "changed": any(r["changed"] for r in results),
        "reboot_required": any(r["reboot_required"] for r in ok),
        "reset_required": reset_required,
        "reset_reason": reset_reason,
    }
