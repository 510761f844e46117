#!/usr/bin/env bash
# The main job on the embedded demo fabric, end to end (what `make demo` runs after installing what it needs):
#   1. validate the intent (inventory/demo/fabric.yml)
#   2. bring up the local NetBox (or use NETBOX_URL / NETBOX_TOKEN when both are set: an existing NetBox)
#   3. synthesize the cdktn stack of the demo (cdktf/main.py -> cdktf/cdktf.out/stacks/demo/cdk.tf.json)
#   4. build the provider aiinfra/hwaac into a local mirror and `terraform init` from it (no registry)
#   5. `terraform apply`: the demo's plane recorded in NetBox (state in cdktf/state/demo.tfstate)
#   6. render every device's files and the fabric docs from what NetBox holds into build/demo
# Run again, terraform reports no changes and the rendered files stay the same.
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
echo "demo: done. NetBox holds the demo fabric; configs and docs rendered from it are in build/demo"
