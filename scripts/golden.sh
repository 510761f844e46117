#!/usr/bin/env bash
# Regenerate the golden files under tests/golden/ from what the renderers write now, then show what changed:
# review `git diff tests/golden` before committing it. The golden tests write their files when
# HWAAC_UPDATE_GOLDEN=1 and compare them otherwise (a second run of this script must change nothing).
#
#   tests/unit/test_render_sonic.py  tests/golden/demo/switches/  (config_db.json per SONiC release)
#   tests/unit/test_render_host.py   tests/golden/demo/hosts/     (netplan, NIC/RoCE, NCCL, Lustre client)
#   tests/unit/test_render_docs.py   tests/golden/demo/docs/      (cabling, IP plan, fabric documents)
#   scripts/golden.py                tests/golden/<example>/      (each inventory/examples fabric: a device of
#                                                                  each kind, the report, a manifest of all)
#
# Usage: scripts/golden.sh [PYTEST ARGS...] (make golden); needs .venv (scripts/bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

GOLDEN_TESTS=(tests/unit/test_render_sonic.py tests/unit/test_render_host.py tests/unit/test_render_docs.py)

HWAAC_UPDATE_GOLDEN=1 .venv/bin/pytest -q -p no:cacheprovider "${GOLDEN_TESTS[@]}" "$@"
# the same tests without the variable: the files just written are what the renderers write
.venv/bin/pytest -q -p no:cacheprovider "${GOLDEN_TESTS[@]}" "$@"
.venv/bin/python scripts/golden.py
.venv/bin/python scripts/golden.py --check
git status --short -- tests/golden
