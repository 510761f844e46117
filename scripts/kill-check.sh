#!/usr/bin/env bash
# Kill safety of the test run, checked for real: start `make test` on tests that use the local NetBox, wait until a
# NetBox server of the run serves, `kill` make (SIGTERM, as a user would), wait 60 s, then list what of the run is
# left. The processes of a run are those whose environment holds HWAAC_TEST_RUN=<id> (tests/conftest.py sets it;
# this script chooses the id), detached servers included. Exit 0 when nothing is left, 1 otherwise.
#
# Usage: scripts/kill-check.sh [PYTEST ARGS...]   (default: tests/integration/test_netbox_readback.py)
# Needs what `make test` needs (root, the Debian packages, .venv). Stops the local NetBox if this run started it.
set -euo pipefail
cd "$(dirname "$0")/.."

run="killcheck-$$-$(date +%s)"
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(tests/integration/test_netbox_readback.py)
wait_up=${KILL_CHECK_WAIT_UP:-900}
log=$(mktemp /tmp/kill-check.XXXXXX.log)

of_run() {  # pids of the run's processes, one a line
    grep -lzx "HWAAC_TEST_RUN=$run" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

show() {  # pid, command line of each pid on stdin
    local pid
    while read -r pid; do
        { [[ -r /proc/$pid/cmdline ]] && printf '  %s %s\n' "$pid" "$(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-150)"; } \
            2>/dev/null || true
    done
}

echo "kill-check: make test PYTEST_ARGS='${args[*]}' as run $run (log $log)"
HWAAC_TEST_RUN=$run make test PYTEST_ARGS="${args[*]}" >"$log" 2>&1 &
make_pid=$!

deadline=$((SECONDS + wait_up))
server=""
while [[ -z "$server" ]]; do
    if ! kill -0 "$make_pid" 2>/dev/null; then
        echo "kill-check: make ended before a NetBox server of the run came up; log: $log" >&2
        tail -n 20 "$log" >&2
        exit 2
    fi
    if (( SECONDS > deadline )); then
        echo "kill-check: no NetBox server of the run within ${wait_up} s" >&2
        kill "$make_pid"
        exit 2
    fi
    for pid in $(of_run); do
        if { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -q 'gunicorn.*netbox.wsgi'; then
            server=$pid
            break
        fi
    done
    sleep 2
done
sleep 5  # let its workers fork
echo "kill-check: NetBox server of the run up (gunicorn pid $server); the run's processes:"
of_run | show
echo "kill-check: kill $make_pid (make)"
kill "$make_pid"
t0=$SECONDS
gone=""
while (( SECONDS - t0 < 60 )); do
    sleep 2
    [[ -z "$gone" && -z "$(of_run)" ]] && gone=$((SECONDS - t0))
done
left=$(of_run)
if [[ -n "$left" ]]; then
    echo "kill-check: FAIL: 60 s after the kill these processes of the run remain:"
    echo "$left" | show
    exit 1
fi
echo "kill-check: PASS: nothing of the run left ${gone:-?} s after the kill, nor $((SECONDS - t0)) s after it"
