""":class:`FabricStack`: one Terraform stack per fabric intent, one ``hwaac_fabric_plane`` per plane."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping

import cdktn
from constructs import Construct

from hwaac.cdk.intent_header import FabricHeader, read_fabric_header
from hwaac.cdk.paths import path_from_stack
from hwaac.cdk.provider import HwaacProvider
from hwaac.cdk.resources import FabricPlane

STATE_FOLDER = "state"
"""Folder next to the output folder that holds the stacks' local state (``cdktf/state`` for ``cdktf/cdktf.out``)."""


def default_state_file(stack_id: str) -> str:
    """The local state path a :class:`FabricStack` uses unless told otherwise, relative to the stack folder:
    ``../../../state/<stack id>.tfstate``, i.e. ``<outdir>/../state/<stack id>.tfstate``.

    Why there: the output folder is disposable. cdktn rewrites it on every synth, and the cdktn CLI deletes a
    stack folder (with any ``terraform.tfstate`` in it) as soon as a synth no longer produces that stack, e.g.
    when ``HWAAC_FABRICS`` leaves a fabric out. cdktn's own default instead is an absolute path under the
    directory synth ran in, which would put a machine-specific path into the JSON. A path relative to the stack
    folder, landing next to the output folder, is both outside the disposable tree and machine-independent; for
    the default ``cdktf/cdktf.out`` it is ``cdktf/state/``, inside the cdktn project (and git-ignored).
    """
    return posixpath.join("..", "..", "..", STATE_FOLDER, f"{stack_id}.tfstate")


class FabricStack(cdktn.TerraformStack):
    """A stack that records one fabric intent in NetBox: a local backend, the ``hwaac`` provider, one
    :class:`~hwaac.cdk.FabricPlane` per plane (``plane0`` ..
    ``plane<N-1>``, counted from 0 as device names count planes) and, per plane, the outputs
    ``plane<n>_counts`` (map of numbers) and ``plane<n>_devices`` (switch name -> loopback and ASN).

    The intent is not validated here (pools may name NetBox roles, which needs NetBox): only ``fabric.name`` and
    ``fabric.planes`` are read, see :mod:`hwaac.cdk.intent_header`. The provider validates it at plan time.

    Args:
        scope: the app.
        id: stack id; also the stack folder's name (``<outdir>/stacks/<id>``). ``main.py`` uses the fabric name.
        intent_file: the intent (``fabric.yml``) or its fabric folder, relative to the current directory or
            absolute. It is written into the stack relative to the stack folder, so the JSON does not depend on
            where the repository is checked out.
        state_file: local state path; relative paths are relative to the stack folder (Terraform's working
            directory). Default: :func:`default_state_file`.
        netbox_url: NetBox URL for the provider; default: the provider reads ``NETBOX_URL``. There is no token
            argument on purpose: the provider reads ``NETBOX_TOKEN`` from the environment.
        pools: NetBox prefix role slug -> CIDR, passed to every plane (see :class:`~hwaac.cdk.FabricPlane`).

    Raises:
        FileNotFoundError: no intent at ``intent_file``.
        hwaac.errors.IntentError: the intent has no usable ``fabric.name`` or ``fabric.planes``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        intent_file: str | os.PathLike[str],
        state_file: str | None = None,
        netbox_url: str | None = None,
        pools: Mapping[str, str] | None = None,
    ) -> None:
        header = read_fabric_header(intent_file)  # fail before any construct exists
        super().__init__(scope, id)
        self.header: FabricHeader = header
        self.state_file: str = state_file if state_file is not None else default_state_file(id)
        self.backend = cdktn.LocalBackend(self, path=self.state_file)
        self.provider = HwaacProvider(self, "hwaac", url=netbox_url)
        # as written into the stack: relative to the stack folder, Terraform's working directory
        self.intent_file: str = path_from_stack(self, header.path)
        self.planes: list[FabricPlane] = []
        for n in range(header.planes):
            plane = FabricPlane(self, f"plane{n}", intent_file=self.intent_file, plane=n, pools=pools)
            self.planes.append(plane)
            cdktn.TerraformOutput(
                self,
                f"plane{n}_counts",
                value=plane.counts,
                description=f"{header.name} plane {n}: NetBox objects recorded, by kind",
            )
            cdktn.TerraformOutput(
                self,
                f"plane{n}_devices",
                value=plane.devices,
                description=f"{header.name} plane {n}: switch name -> loopback and ASN",
            )
