# The two commands of the README:
#   make demo   plan the embedded demo fabric and render every file into build/demo
#   make test   run the whole test suite (what CI runs, through .ci/run)
# and, with NetBox:
#   make demo-netbox   make demo, then bring up the local NetBox and record the demo fabric in it
# Both install what they need first (Python 3.12 venv in .venv, packages, Debian tools) and can run again.

.PHONY: demo demo-netbox test lint bench bootstrap system-deps schema

bootstrap:
	@scripts/bootstrap.sh

system-deps:
	@scripts/install-system-deps.sh

demo: bootstrap
	.venv/bin/hwaac validate inventory/demo
	.venv/bin/hwaac plan inventory/demo -o build/demo

demo-netbox: demo system-deps
	.venv/bin/hwaac netbox up
	.venv/bin/hwaac netbox sync inventory/demo

test: bootstrap system-deps
	.venv/bin/ruff check src tests benchmarks
	.venv/bin/pytest -n 2 -q

lint: bootstrap
	.venv/bin/ruff check src tests benchmarks

schema: bootstrap
	.venv/bin/hwaac schema -o inventory/fabric.schema.json

bench: bootstrap
	.venv/bin/python benchmarks/plan_scale.py
