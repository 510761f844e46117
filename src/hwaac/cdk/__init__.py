"""cdktn constructs for the Terraform provider ``aiinfra/hwaac`` (local name ``hwaac``), written by hand from the
provider's schema (no ``cdktn get`` bindings needed).

- :class:`HwaacProvider` - ``provider "hwaac"`` (NetBox URL/token; both default to ``NETBOX_URL``/``NETBOX_TOKEN``
  in the environment of ``terraform``; never pass a real token here, it would land in ``cdk.tf.json``);
- :class:`IpamPool` - ``hwaac_ipam_pool``, a NetBox prefix with a role;
- :class:`FabricPlane` - ``hwaac_fabric_plane``, one plane of a fabric intent recorded in NetBox;
- :class:`DataHwaacNetboxPrefix`, :class:`DataHwaacFabricPlan` - the data sources;
- :class:`FabricStack` - a whole stack for one ``fabric.yml``;
- :func:`path_from_stack` - a local path as Terraform sees it from a stack's folder (for ``intent_file``).

Importing this module imports ``cdktn``, which starts jsii's node child process; it keeps the environment it was
started with. Set these before the first import (``cdktf/main.py`` and ``tests/unit/conftest.py`` do):
``JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20`` (node 20 works, jsii just warns loudly),
``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` (else jsii caches under ``~/.cache/aws/jsii``) and ``CHECKPOINT_DISABLE=1``.
"""

from hwaac.cdk._common import PROVIDER_NAME, PROVIDER_SOURCE, PROVIDER_VERSION_CONSTRAINT
from hwaac.cdk.data_sources import DataHwaacFabricPlan, DataHwaacNetboxPrefix
from hwaac.cdk.intent_header import FabricHeader, read_fabric_header
from hwaac.cdk.paths import path_from_stack, stack_dir
from hwaac.cdk.provider import HwaacProvider
from hwaac.cdk.resources import FabricPlane, IpamPool
from hwaac.cdk.stack import FabricStack, default_state_file

__all__ = [
    "PROVIDER_NAME",
    "PROVIDER_SOURCE",
    "PROVIDER_VERSION_CONSTRAINT",
    "DataHwaacFabricPlan",
    "DataHwaacNetboxPrefix",
    "FabricHeader",
    "FabricPlane",
    "FabricStack",
    "HwaacProvider",
    "IpamPool",
    "default_state_file",
    "path_from_stack",
    "read_fabric_header",
    "stack_dir",
]
