#!/usr/bin/env bash
# Apply the demo's rendered files with the Ansible collection, every host simulated on localhost:
#   1. the files in build/demo (from `make demo`, rendered from NetBox; or planned here from the intent when missing)
#   2. simulated hosts in build/sim (python -m tests.fakes.simulate: factory state of every switch and node, kept
#      between runs)
#   3. ansible-playbook -i inventory/demo/simulated playbooks/site.yml (extra arguments go to it, e.g. --check --diff)
# Run again, the play recap reports changed=0 on every host.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -f build/demo/plan.json ]] || .venv/bin/hwaac plan inventory/demo -o build/demo
.venv/bin/python -m tests.fakes.simulate --render build/demo --out build/sim
PATH="$PWD/.venv/bin:$PATH" ansible-playbook -i inventory/demo/simulated playbooks/site.yml "$@"
