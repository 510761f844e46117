#!/usr/bin/env bash
# Install the Debian/Ubuntu packages hwaac's integration tests need, only those that are missing.
#
#   netplan.io  `netplan generate --root-dir DIR` (tests/integration/test_host_network.py checks the rendered
#               host netplan with netplan's own generator)
#   iproute2    `ip netns`, `ip link ... type veth`, `ip route get`, `ip rule` (multi-rail routing in Linux
#               network namespaces)
#   redis-server  Redis for the local NetBox (`hwaac netbox up`, tests/integration/test_netbox_local.py)
#   postgresql  PostgreSQL server binaries (initdb, postgres, psql under /usr/lib/postgresql/<N>/bin) and the
#               `postgres` OS user, for the local NetBox's own cluster on a loopback port
#   nodejs      node for jsii, which runs the cdktn constructs (hwaac.cdk, cdktf/main.py); node 20 or newer
#   frr, frr-pythontools  zebra, bgpd, vtysh and frr-reload.py for the twin (`hwaac lab`: FRR per switch namespace)
#   lldpd       LLDP per twin switch (`hwaac lab`, the LLDP check of `hwaac verify`)
#   nftables    nft: random loss on a namespace's interface where the kernel has no netem qdisc
#               (tests/integration/test_probe_netns.py)
#   iputils-ping  ping with -I and -M do in the twin's node namespaces (rail paths and path MTU of `hwaac verify`)
#   prometheus  `promtool check rules` / `promtool test rules` over files/prometheus/ (tests/prometheus/); the
#               package's server is not started by the tests (in a container without systemd it does not start)
#   prometheus-alertmanager  alertmanager for the closed mitigation loop on the twin (hwaac.lab.loop): the tests
#               start their own on a loopback port
#   openjdk-17-jre-headless  Java 17 for ansible-rulebook's rule engine (drools_jpy), the loop's Event-Driven Ansible
#   ShellCheck  lints the CI templates' shell steps and files/ci/hwaac-ci.sh
#               (tests/integration/test_ci_templates.py; package shellcheck)
#
# terraform is not a Debian package: it must be on PATH already (checked at the end).
#
# Idempotent: a second run installs nothing and does not touch the package lists (`apt-get update` runs only
# when something is missing). Needs root (or sudo) and apt-get. Prints what it installed, or that nothing was
# needed. Usage: scripts/install-system-deps.sh
set -euo pipefail

PACKAGES=(netplan.io iproute2 redis-server postgresql nodejs frr frr-pythontools lldpd nftables iputils-ping
          prometheus prometheus-alertmanager openjdk-17-jre-headless shellcheck)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "installed" ]]; then
        missing+=("$pkg")
    fi
done

check_tools() {
    if ! command -v terraform >/dev/null 2>&1; then
        echo "install-system-deps: terraform is not on PATH; install Terraform >= 1.5 (or put it on PATH)" >&2
        exit 1
    fi
    local major
    major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
    if (( major < 20 )); then
        echo "install-system-deps: node $(node --version 2>/dev/null || echo missing) is too old for jsii (cdktn);" \
             "install node 20 or newer" >&2
        exit 1
    fi
}

if [[ ${#missing[@]} -eq 0 ]]; then
    check_tools
    echo "install-system-deps: nothing to install (${PACKAGES[*]} present; terraform and node found)"
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "install-system-deps: need root (or sudo) to install: ${missing[*]}" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# apt's own chatter (and debconf's "delaying package configuration") goes to a log shown only on failure.
if ! { "${SUDO[@]}" apt-get update -qq && \
       "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-system-deps: apt-get failed installing: ${missing[*]}" >&2
    exit 1
fi

for cmd in netplan ip redis-server vtysh lldpd ping promtool prometheus-alertmanager java; do
    if ! command -v "$cmd" >/dev/null 2>&1 && [[ ! -x "/usr/sbin/$cmd" ]]; then
        echo "install-system-deps: $cmd still missing after installing ${missing[*]}" >&2
        exit 1
    fi
done
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! command -v initdb >/dev/null 2>&1; then
    echo "install-system-deps: PostgreSQL's initdb still missing after installing ${missing[*]}" >&2
    exit 1
fi
check_tools
echo "install-system-deps: installed ${missing[*]}"
