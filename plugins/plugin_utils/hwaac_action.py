# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The shared start of this collection's controller-side action plugins: the hwaac package must be importable (it
is this collection's Python core, the same version), and the task's arguments are validated against the module's
argument spec, with one-line errors that name the module."""

from __future__ import annotations

from typing import Any, ClassVar

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports


class HwaacAction(ActionBase):
    """Subclasses name their module and their imports in the class line,
    ``class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC)`` (``spec=`` where the argument spec is not
    ``controller_specs.SPECS[<short name>]``), and call :meth:`start` at the top of ``run``."""

    MODULE = ""
    SPEC: ClassVar[dict[str, dict[str, Any]]] = {}
    HWAAC = HwaacImports()  # no hwaac imports: nothing to report
    TRANSFERS_FILES = False

    def __init_subclass__(
        cls,
        module: str = "",
        hwaac: HwaacImports | None = None,
        spec: dict[str, dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if module:
            cls.MODULE = module
            cls.SPEC = spec if spec is not None else SPECS[module.rsplit(".", 1)[-1]]
        if hwaac is not None:
            cls.HWAAC = hwaac

    def start(
        self, tmp: Any, task_vars: dict[str, Any] | None, **validator: Any
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """``(result, task_vars, args)``: the base result, the task's variables, the validated arguments.

        Raises:
            AnsibleActionFail: hwaac is not importable, or the arguments do not match the spec.
        """
        self.HWAAC.require(f"{self.MODULE} needs", AnsibleActionFail)
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        checked = ArgumentSpecValidator(self.SPEC, **validator).validate(self._task.args)
        if checked.error_messages:
            raise AnsibleActionFail(f"{self.MODULE}: {'; '.join(checked.error_messages)}")
        return result, task_vars, checked.validated_parameters

    def netbox(self, args: dict[str, Any]) -> Any:
        """A checked NetBox client (``hwaac.netbox.connection.connect``) for the task's ``netbox_url`` and
        ``netbox_token``, else the environment's NETBOX_URL / NETBOX_TOKEN, else the local NetBox.

        Raises:
            AnsibleActionFail: no NetBox, the token refused, an unsupported version (one line, never the token).
        """
        from hwaac.netbox.connection import connect
        from hwaac.netbox.errors import NetBoxError

        try:
            return connect(args.get("netbox_url"), args.get("netbox_token"))
        except NetBoxError as exc:
            raise AnsibleActionFail(f"{self.MODULE}: {str(exc).splitlines()[0]}") from None
