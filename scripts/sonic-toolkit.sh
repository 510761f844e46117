#!/usr/bin/env bash
# Set up the SONiC toolkit named by HWAAC_SONIC_TOOLKIT (SONiC's YANG validator, GCU dry run and FRR templates; a
# folder outside the checkout: README.md, "SONiC releases and SONiC's own validators") for this checkout: its own
# Python 3.12 virtualenv .venv-sonic (the toolkit pins netaddr 0.8.0, which must not reach hwaac's .venv), then
# "$HWAAC_SONIC_TOOLKIT/setup.sh .venv-sonic/bin/python" (cache: HWAAC_SONIC_CACHE or setup.sh's default, where
# hwaac.sonic_toolkit looks). Without HWAAC_SONIC_TOOLKIT it does nothing. Safe to run again: about a second when
# everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${HWAAC_SONIC_TOOLKIT:-}" ]; then
  echo "sonic-toolkit: HWAAC_SONIC_TOOLKIT is not set: nothing to set up (tests that need SONiC's own checks skip)"
  exit 0
fi
kit=$HWAAC_SONIC_TOOLKIT
if [ ! -f "$kit/setup.sh" ] || [ ! -f "$kit/VERSION" ]; then
  echo "sonic-toolkit: HWAAC_SONIC_TOOLKIT=$kit is not the SONiC toolkit folder (no setup.sh and VERSION there)" >&2
  exit 1
fi

# the Python 3.12 that scripts/bootstrap.sh found: the interpreter behind .venv
if [ ! -x .venv/bin/python ]; then
  echo "sonic-toolkit: .venv is missing: run scripts/bootstrap.sh (make bootstrap) first" >&2
  exit 1
fi
py=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')

if [ ! -x .venv-sonic/bin/python ] || \
   ! .venv-sonic/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
  echo "sonic-toolkit: creating .venv-sonic with $py"
  rm -rf .venv-sonic
  "$py" -m venv .venv-sonic
fi

args=("$PWD/.venv-sonic/bin/python")
[ -n "${HWAAC_SONIC_CACHE:-}" ] && args+=("$HWAAC_SONIC_CACHE")
if ! out=$(bash "$kit/setup.sh" "${args[@]}" 2>&1); then
  printf '%s\n' "$out" >&2
  echo "sonic-toolkit: $kit/setup.sh failed" >&2
  exit 1
fi
printf '%s\n' "$out" | tail -n 1
