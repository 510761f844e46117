#!/usr/bin/env bash
# Create (or refresh) the project's Python 3.12 virtual environment in .venv and install hwaac with its test
# tools and its guard rails (the dev extra: pre-commit, yamllint, codespell, mypy). Safe to run again: it
# reinstalls only when pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  local candidates=(python3.12)
  if command -v pyenv >/dev/null 2>&1; then
    candidates+=("$(pyenv root)"/versions/3.12*/bin/python3.12)
  fi
  candidates+=("$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12)
  local c
  for c in "${candidates[@]}"; do
    if [ -x "$(command -v "$c" 2>/dev/null || echo "$c")" ] && \
       "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
  py=$(find_python) || { echo "bootstrap: Python 3.12 not found (tried python3.12 and pyenv versions); install it" >&2; exit 1; }
  echo "bootstrap: creating .venv with $py"
  rm -rf .venv
  "$py" -m venv .venv
fi

stamp=.venv/.hwaac-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing hwaac and its test tools into .venv"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev]' 2>&1 | grep -v '^WARNING: Location' || true
  .venv/bin/python -c 'import hwaac, pytest, hypothesis' # fails loudly if the install did not work
  echo "$want" > "$stamp"
fi
