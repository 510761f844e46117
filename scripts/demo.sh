#!/usr/bin/env bash
# The main job on the embedded demo fabric, end to end (what `make demo` runs after installing what it needs):
#   1. validate the intent (inventory/demo/fabric.yml)
#   2. bring up the local NetBox (or use NETBOX_URL / NETBOX_TOKEN when both are set: an existing NetBox)
#   3. synthesize the cdktn stack of the demo (cdktf/main.py -> cdktf/cdktf.out/stacks/demo/cdk.tf.json)
#   4. build the provider aiinfra/hwaac into a local mirror and `terraform init` from it (no registry)
#   5. `terraform apply`: the demo's plane recorded in NetBox (state in cdktf/state/demo.tfstate)
#   6. render every device's files and the fabric docs from what NetBox holds into build/demo
#   7. the twin: the rendered fabric in network namespaces (`hwaac lab up`: FRR and lldpd per switch, the GPU nodes
#      with their rendered files), its switches reset to a factory config the first time
#   8. the fabric deployed to the twin with the collection (`hwaac lab deploy`: playbooks/fabric_deploy.yml, SONiC
#      GCU patches when HWAAC_SONIC_TOOLKIT names the toolkit, checkpoints, the BGP gate, rollback)
#   9. `hwaac lab converge demo`, then `hwaac verify lab:demo`: LLDP = cabling plan, BGP, routes and ECMP, rails,
#      path MTU, interfaces
# Run again, terraform reports no changes, the rendered files stay the same, the deploy changes nothing and verify
# passes. The twin stays up: `.venv/bin/hwaac lab down demo` removes it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 JSII_RUNTIME_PACKAGE_CACHE_ROOT="$root/build/jsii-cache"

.venv/bin/hwaac validate inventory/demo
if [[ -n "${NETBOX_URL:-}" ]]; then
    echo "demo: using the NetBox at $NETBOX_URL (token from NETBOX_TOKEN)"
else
    .venv/bin/hwaac netbox up
fi

(cd cdktf && HWAAC_FABRICS=demo ../.venv/bin/python main.py)
.venv/bin/hwaac terraform mirror -o build/terraform
export TF_CLI_CONFIG_FILE="$root/build/terraform/terraform.rc"

cd cdktf/cdktf.out/stacks/demo
terraform init -input=false -no-color | grep -E "Installing|Installed|Reusing|initialized|Error" || true
test -f .terraform.lock.hcl
terraform apply -input=false -auto-approve -no-color
cd "$root"

.venv/bin/hwaac netbox render inventory/demo -o build/demo

if .venv/bin/hwaac lab status demo >/dev/null 2>&1; then
    echo "demo: the twin 'demo' is up (.venv/bin/hwaac lab down demo removes it)"
else
    .venv/bin/hwaac lab up build/demo --name demo
    .venv/bin/hwaac lab deploy demo --reset     # the switches as installed: the deploy below pushes everything
fi
.venv/bin/hwaac lab deploy demo --quiet
# the deploy's gate waits for each batch's BGP sessions, not for the last batch's routes to reach every switch:
# verify judges the converged fabric (its rail paths ping across SUs)
.venv/bin/hwaac lab converge demo
.venv/bin/hwaac verify lab:demo
echo "demo: done. NetBox holds the demo fabric; configs and docs rendered from it are in build/demo; the twin"
echo "demo: 'demo' runs them, deployed with the collection and verified (.venv/bin/hwaac lab status demo)"
