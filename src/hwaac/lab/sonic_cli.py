"""The SONiC tools of a lab switch: ``sonic-cfggen`` (reading CONFIG_DB) and ``config`` (GCU's commands).

``python -m hwaac.lab.sonic_cli --lab-dir LAB --device SWITCH TOOL ARGS`` (the wrappers in the lab's
``bin/<device>/`` run exactly that; :func:`write_wrappers`), or ``--state-dir DIR TOOL ARGS`` for a switch's files
without FRR attached. Output follows sonic-utilities as the test fake tests/fakes/bin/config records it.
``apply-patch`` and ``rollback`` are decided by :func:`hwaac.lab.gcu.decide`; an accepted change becomes the
running config and the switch's FRR is reloaded from it (:mod:`hwaac.lab.frr_reload`). The commands, their output
and errors (click's ``ctx.fail``, exit 2): docs/lab-deploy.md "A lab switch".
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hwaac.lab.errors import LabError
from hwaac.lab.gcu import Decision, PatchRefused, decide, replace_patch
from hwaac.lab.sonic_state import SwitchState, check_checkpoint_name

SCOPE = "localhost"
ROLLBACKER, REPLACER = "Config Rollbacker", "Config Replacer"  # GCU's logger titles (generic_updater.py)
USAGE = {
    "apply-patch": "Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH",
    "rollback": "Usage: config rollback [OPTIONS] CHECKPOINT_NAME",
    "checkpoint": "Usage: config checkpoint [OPTIONS] CHECKPOINT_NAME",
    "delete-checkpoint": "Usage: config delete-checkpoint [OPTIONS] CHECKPOINT_NAME",
    "list-checkpoints": "Usage: config list-checkpoints [OPTIONS]",
    "save": "Usage: config save [OPTIONS] [FILENAME]",
}
TOOLS = ("sonic-cfggen", "config")
Out = Callable[[str], None]


class Frr:
    """The lab switch's FRR, which follows its running config (absent for a switch's files alone)."""

    def __init__(self, lab_dir: Path, device: str) -> None:
        from hwaac.lab.layout import Layout
        from hwaac.lab.manifest import read_state

        state = read_state(lab_dir)
        dev = state.get("devices", {}).get(device)
        if not dev or dev.get("kind") != "switch":
            raise LabError(f"lab {state.get('name')!r} has no switch {device!r}")
        self.lab_dir, self.device, self.netns = lab_dir, device, str(dev["netns"])
        self.layout = Layout(lab_dir)
        self.render_dir = Path(state.get("render_dir") or "")

    def check(self, config: dict[str, Any]) -> None:
        from hwaac.lab.frr_reload import check

        check(config)

    def apply(self, config: dict[str, Any]) -> str:
        from hwaac.lab.frr_reload import apply, record_neighbors

        done = apply(self.layout, self.device, self.netns, config)
        record_neighbors(self.lab_dir, self.device, config)
        return done


class Switch:
    """A switch's SONiC files and, in a lab, its FRR."""

    def __init__(self, state: SwitchState, frr: Frr | None = None) -> None:
        self.state, self.frr = state, frr

    @classmethod
    def of_lab(cls, lab_dir: Path, device: str) -> Switch:
        frr = Frr(lab_dir, device)
        rendered = frr.render_dir / "switches" / device / "config_db.json"
        return cls(SwitchState(frr.layout.dev_dir(device), rendered if rendered.is_file() else None), frr)

    def commit(self, config: dict[str, Any]) -> str:
        """``config`` becomes the running config and FRR follows; FRR's refusal is checked before the write."""
        if self.frr is not None:
            self.frr.check(config)
        self.state.write_running(config)
        return self.frr.apply(config) if self.frr is not None else ""


class ClickFail(Exception):
    """What click's ``ctx.fail`` prints after the command's red line (exit status 2)."""

    def __init__(self, command: str, message: str, red_line: str = "") -> None:
        super().__init__(message)
        self.command, self.message, self.red_line = command, message, red_line


# ------------------------------------------------------------------------------------------------- sonic-cfggen


def sonic_cfggen(switch: Switch, args: Sequence[str], out: Out) -> int:
    """``sonic-cfggen -d`` with ``--print-data``, ``-v TABLE.key.field`` or ``--var-json TABLE``."""
    import argparse

    p = argparse.ArgumentParser(prog="sonic-cfggen", description="the lab switch's CONFIG_DB (hwaac lab)")
    p.add_argument("-d", "--from-db", action="store_true", required=True, help="read CONFIG_DB")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--print-data", action="store_true", help="print all data")
    what.add_argument("-v", "--var", metavar="EXPR", help="print the value of TABLE.key.field")
    what.add_argument("--var-json", metavar="TABLE", help="print a table in JSON")
    a = p.parse_args(list(args))
    data = switch.state.running()
    if a.print_data:
        out(json.dumps(data, indent=4))
    elif a.var_json is not None:
        out(json.dumps(data.get(a.var_json, {}), indent=4))
    else:
        value: Any = data
        for part in a.var.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        out(value if isinstance(value, str) else json.dumps(value))
    return 0


# ------------------------------------------------------------------------------------------------------ config


def applier_lines(patch: Sequence[Any], changes: Sequence[Any], *, applied: bool) -> list[str]:
    """GCU's Patch Applier log (generic_updater.py ``PatchApplier.apply``) for ``patch`` sorted into ``changes``."""
    n = len(changes)
    s = "s" if n != 1 else ""
    lines = [
        f"Patch Applier: {SCOPE}: Patch application starting.",
        f"Patch Applier: {SCOPE}: Patch: {json.dumps(list(patch))}",
        f"Patch Applier: {SCOPE} getting current config db.",
        f"Patch Applier: {SCOPE}: simulating the target full config after applying the patch.",
        f"Patch Applier: {SCOPE}: validating all JsonPatch operations are permitted on the specified fields",
        f"Patch Applier: {SCOPE}: validating target config does not have empty tables,",
        "                            since they do not show up in ConfigDb.",
        f"Patch Applier: {SCOPE}: sorting patch updates.",
        f"Patch Applier: The {SCOPE} patch was converted into {n} change{s}{':' if n else '.'}",
        f"Patch Applier: {SCOPE}: applying {n} change{s} in order{':' if n else '.'}",
    ]
    if applied:
        lines += [f"Patch Applier:   * {json.dumps(c)}" for c in changes]
        lines += [
            f"Patch Applier: {SCOPE}: verifying patch updates are reflected on ConfigDB.",
            f"Patch Applier: {SCOPE} patch application completed.",
        ]
    return lines


def cmd_apply_patch(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    files: list[str] = []
    extra: list[str] = []
    dry_run = False
    it = iter(args)
    for a in it:
        if a in ("-d", "--dry-run"):
            dry_run = True
        elif a in ("-n", "--ignore-non-yang-tables"):
            extra.append("--ignore-non-yang-tables")
        elif a in ("-i", "--ignore-path"):
            extra += ["--ignore-path", _value(it, "apply-patch", a)]
        elif a in ("-f", "--format"):
            fmt = _value(it, "apply-patch", a)
            if fmt.upper() != "CONFIGDB":
                raise ClickFail(
                    "apply-patch", f"Invalid value for '-f' / '--format': {fmt!r}: the lab takes CONFIGDB patches only."
                )
        elif a in ("-v", "--verbose", "-p", "--parallel"):
            continue
        elif a.startswith("-"):
            raise ClickFail("apply-patch", f"No such option: {a}")
        else:
            files.append(a)
    if len(files) != 1:
        raise ClickFail(
            "apply-patch",
            "Missing argument 'PATCH_FILE_PATH'." if not files else f"Got unexpected extra argument ({files[1]})",
        )
    patch = _read_patch(files[0])
    with switch.state.locked():
        running = switch.state.running()
        try:
            decision = decide(running, patch, switch.state.version(), extra_args=extra)
            for w in decision.warnings:
                err(f"WARNING: {w}")
            if switch.frr is not None:
                switch.frr.check(decision.config)
        except (PatchRefused, LabError) as exc:
            out("\n".join(applier_lines(patch, [], applied=False)[:5]))
            raise _patch_failed(str(exc)) from None
        if not dry_run and decision.config != running:
            try:
                done = switch.commit(decision.config)
            except LabError as exc:
                raise _patch_failed(f"CONFIG_DB was changed, but the switch's FRR did not follow: {exc}") from None
            if done:
                err(done)
    out("\n".join(applier_lines(patch, decision.changes, applied=True)))
    out("Patch applied successfully.")
    return 0


def _patch_failed(message: str) -> ClickFail:
    full = f"Failed to apply patch on the following scopes:\n- {SCOPE}: {message}"
    return ClickFail("apply-patch", full, f"Failed to apply patch due to: {full}")


def _read_patch(path: str) -> list[dict[str, Any]]:
    """The patch file: a JSON list of operations, each with ``op`` and ``path`` (main.py validate_patch_format)."""
    try:
        patch = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ClickFail("apply-patch", f"Invalid value for 'PATCH_FILE_PATH': Path '{path}' does not exist.") from None
    except (OSError, ValueError) as exc:
        raise _patch_failed(f"Invalid patch format in file: {path} ({exc})") from None
    if not isinstance(patch, list) or not all(isinstance(op, dict) and "op" in op and "path" in op for op in patch):
        raise _patch_failed(f"Invalid patch format in file: {path} (a JSON list of operations with op and path)")
    return patch


def _log(title: str, *lines: str) -> str:
    """``lines`` as GCU's TitledLogger prints them, each after ``title:`` (generic_config_updater/gu_common.py)."""
    return "\n".join(f"{title}: {line}" for line in lines)


def _rollbacker_start(task: str, name: str, *steps: str) -> str:
    """How ConfigRollbacker (generic_updater.py) opens ``task`` on checkpoint ``name``, then ``steps``."""
    return _log(ROLLBACKER, f"{task} starting.", f"Checkpoint name: {name}.", *steps)


def cmd_checkpoint(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    name = _name("checkpoint", args)
    with switch.state.locked():
        switch.state.write_checkpoint(name, switch.state.running())
    steps = ("Getting current config db.", "Getting checkpoint full-path.", "Ensuring checkpoint directory exist.")
    saving = f"Saving config db content to /etc/sonic/checkpoints/{name}.cp.json."
    out(_rollbacker_start("Config checkpoint", name, *steps, saving, "Config checkpoint completed."))
    out("Checkpoint created successfully.")
    return 0


def cmd_rollback(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    name = _name("rollback", args)
    out(_rollbacker_start("Config rollbacking", name, f"Verifying '{name}' exists."))
    with switch.state.locked():
        target = switch.state.checkpoint(name)
        if target is None:
            raise ClickFail("rollback", f"Checkpoint '{name}' does not exist", "Failed to rollback config")
        running = switch.state.running()
        patch = replace_patch(running, target)
        decision: Decision | None = None
        try:
            if patch:
                decision = decide(running, patch, switch.state.version(), validate=False, what="rollback")
                for w in decision.warnings:
                    err(f"WARNING: {w}")
                if decision.config != target:  # generic_updater.py ConfigReplacer.replace verifies the same
                    raise LabError(f"{SCOPE}: after replacing config, there is still some parts not updated")
            done = switch.commit(target) if patch else ""
        except (PatchRefused, LabError) as exc:
            raise ClickFail("rollback", str(exc), "Failed to rollback config") from None
    if done:
        err(done)
    changes = decision.changes if decision else ()
    out(_log(ROLLBACKER, "Loading checkpoint into memory.", "Replacing config using 'Config Replacer'."))
    out(
        _log(
            REPLACER,
            "Config replacement starting.",
            f"Target config length: {len(json.dumps(target))}.",
            "Getting current config db.",
            "Generating patch between target config and current config db.",
            "Applying patch using 'Patch Applier'.",
        )
    )
    out("\n".join(applier_lines(patch, changes, applied=True)))
    out(_log(REPLACER, "Verifying config replacement is reflected on ConfigDB.", "Config replacement completed."))
    out(_log(ROLLBACKER, "Config rollbacking completed."))
    out("Config rolled back successfully.")
    return 0


def cmd_delete_checkpoint(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    name = _name("delete-checkpoint", args)
    out(_rollbacker_start("Deleting checkpoint", name, "Checking checkpoint exists."))
    with switch.state.locked():
        if not switch.state.delete_checkpoint(name):
            raise ClickFail(
                "delete-checkpoint", f"Checkpoint '{name}' does not exist", "Failed to delete config checkpoint"
            )
    out(_log(ROLLBACKER, "Deleting checkpoint.", "Deleting checkpoint completed."))
    out("Checkpoint deleted successfully.")
    return 0


def cmd_list_checkpoints(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    if [a for a in args if a not in ("-v", "--verbose")]:
        raise ClickFail("list-checkpoints", f"Got unexpected extra argument ({args[0]})")
    out(json.dumps(switch.state.checkpoints(), indent=4))
    return 0


def cmd_save(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    if not any(a in ("-y", "--yes") for a in args):
        out("Existing files will be overwritten, continue? [y/N]: \nAborted!")
        return 1
    if [a for a in args if not a.startswith("-")]:
        raise ClickFail("save", "the lab saves to the default file only (/etc/sonic/config_db.json)")
    with switch.state.locked():
        switch.state.save()
    out("Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json")
    return 0


def _name(command: str, args: Sequence[str]) -> str:
    names = [a for a in args if not a.startswith("-")]
    if len(names) != 1:
        raise ClickFail(
            command,
            "Missing argument 'CHECKPOINT_NAME'." if not names else f"Got unexpected extra argument ({names[1]})",
        )
    try:
        return check_checkpoint_name(names[0])
    except LabError as exc:
        raise ClickFail(command, str(exc)) from None


def _value(it: Any, command: str, option: str) -> str:
    try:
        return str(next(it))
    except StopIteration:
        raise ClickFail(command, f"Option '{option}' requires an argument.") from None


COMMANDS: dict[str, Callable[[Switch, Sequence[str], Out, Out], int]] = {
    "apply-patch": cmd_apply_patch,
    "checkpoint": cmd_checkpoint,
    "rollback": cmd_rollback,
    "delete-checkpoint": cmd_delete_checkpoint,
    "list-checkpoints": cmd_list_checkpoints,
    "save": cmd_save,
}


def config(switch: Switch, args: Sequence[str], out: Out, err: Out) -> int:
    """``config COMMAND ARGS``: one of :data:`COMMANDS`; exit status as sonic-utilities' (0, 1, 2)."""
    if not args or args[0] not in COMMANDS:
        err(
            "Usage: config [OPTIONS] COMMAND [ARGS]...\nTry \"config -h\" for help.\n\n"
            f"Error: No such command '{args[0] if args else ''}' (the lab's config has: {', '.join(COMMANDS)})."
        )
        return 2
    try:
        return COMMANDS[args[0]](switch, args[1:], out, err)
    except ClickFail as exc:
        red = f"{exc.red_line}\n" if exc.red_line else ""
        err(f"{red}{USAGE[exc.command]}\nTry \"config {exc.command} -h\" for help.\n\nError: {exc.message}")
        return 2


# ------------------------------------------------------------------------------------------------ entry points


def write_wrappers(lab_dir: Path, device: str) -> list[Path]:
    """Write ``sonic-cfggen`` and ``config`` into the lab's ``bin/<device>/`` (next to vtysh and lldpcli); the
    paths. They run this module with the Python that runs hwaac now."""
    from hwaac.lab.layout import Layout

    folder = Layout(lab_dir).bin_dir(device)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for tool in TOOLS:
        argv = [sys.executable, "-P", "-m", "hwaac.lab.sonic_cli", "--lab-dir", str(lab_dir), "--device", device, tool]
        path = folder / tool
        text = (
            f"#!/bin/sh\n# SONiC's {tool} on {device} of the lab in {lab_dir} (written by hwaac lab deploy)\n"
            f"exec {shlex.join(argv)} \"$@\"\n"
        )
        if not path.exists() or path.read_text() != text:
            tmp = path.with_name(f".{tool}.tmp")
            tmp.write_text(text)
            tmp.chmod(0o755)
            tmp.replace(path)
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hwaac.lab.sonic_cli (--lab-dir LAB --device SWITCH | --state-dir DIR) TOOL ARGS``."""
    args = list(sys.argv[1:] if argv is None else argv)
    opts: dict[str, str] = {}
    while args and args[0] in ("--lab-dir", "--device", "--state-dir") and len(args) > 1:
        opts[args[0]] = args[1]
        args = args[2:]
    if not args or args[0] not in TOOLS or not (("--lab-dir" in opts and "--device" in opts) or "--state-dir" in opts):
        print(
            "usage: python -m hwaac.lab.sonic_cli (--lab-dir LAB --device SWITCH | --state-dir DIR) "
            f"{{{','.join(TOOLS)}}} ARGS...",
            file=sys.stderr,
        )
        return 2

    def out(text: str) -> None:
        print(text, flush=True)

    def err(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    try:
        switch = (
            Switch.of_lab(Path(opts["--lab-dir"]), opts["--device"])
            if "--lab-dir" in opts
            else Switch(SwitchState(Path(opts["--state-dir"])))
        )
        if args[0] == "sonic-cfggen":
            return sonic_cfggen(switch, args[1:], out)
        return config(switch, args[1:], out, err)
    except LabError as exc:
        err(f"{args[0]} (hwaac lab): {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
