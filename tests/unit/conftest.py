"""Environment for tests that import cdktn (tests/unit/test_cdk.py).

It must be set here, at conftest import, before any test module imports cdktn: the first import starts jsii's node
child process, which keeps the environment it was started with (monkeypatch.setenv in a test is too late).
setdefault, so values set by the caller or CI win.
"""

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")  # node 20 works; jsii only warns
os.environ.setdefault("JSII_RUNTIME_PACKAGE_CACHE_ROOT", str(_REPO / "build" / "jsii-cache"))  # not ~/.cache
os.environ.setdefault("CHECKPOINT_DISABLE", "1")  # terraform, if a helper runs it, must not phone home
