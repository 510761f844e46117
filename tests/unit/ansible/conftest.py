"""Unit tests of the collection's plugins import them as Ansible does, by their collection path
(``ansible_collections.aiinfra.hwaac.plugins...``): the repository's ``ansible_collections/aiinfra/hwaac`` link
resolves to the root, so the root on ``sys.path`` is enough."""

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[3]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))
