"""cdktn constructs for the Terraform provider ``aiinfra/hwaac`` (local name ``hwaac``), written by hand from the
provider's schema (no ``cdktn get`` bindings needed): :class:`HwaacProvider`, :class:`IpamPool`,
:class:`FabricPlane`, the data sources :class:`DataHwaacNetboxPrefix` and :class:`DataHwaacFabricPlan`,
:class:`FabricStack` (a whole stack for one ``fabric.yml``) and :func:`path_from_stack`.

Never pass a real token to :class:`HwaacProvider`: it would land in ``cdk.tf.json``. Importing this module starts
jsii's node child process, which keeps the environment it was started with: set
``JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION``, ``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` and ``CHECKPOINT_DISABLE``
before the first import (docs/terraform.md "The cdktn constructs" says why).
"""

from hwaac.cdk.common import PROVIDER_NAME, PROVIDER_SOURCE, PROVIDER_VERSION_CONSTRAINT
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
