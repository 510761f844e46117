#!/usr/bin/env bash
# Fail when inventory/fabric.schema.json is not what `hwaac schema` prints now (the pre-commit hook schema-fresh);
# `make schema` writes it again. Needs .venv (scripts/bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/hwaac schema | cmp -s - inventory/fabric.schema.json; then
  echo "inventory/fabric.schema.json is not what \`hwaac schema\` prints: run make schema and commit it" >&2
  exit 1
fi
