#!/usr/bin/env bash
# Installs the real peers the integration tests start: Open vSwitch (switch
# and test controller), tshark, Prometheus, traffic tools. Idempotent: when
# every package is already installed it does nothing, so `make test` stays
# fast. Meant for a fresh Debian 12 machine (CI) running as root without
# systemd; no service is started.
set -euo pipefail

PACKAGES=(
	openvswitch-switch
	openvswitch-testcontroller
	tshark
	prometheus
	iperf3
	hping3
	iputils-ping
	ethtool
	tcpdump
	iproute2
	# Mininet 2.3: mn is a /usr/bin/python3 script and the package ships its
	# Python modules; deploy/mininet/pseudocong.py plugs our switch and
	# controller into it (docs/mininet.md).
	mininet
	# ns-3 3.37, the reference simulator of validation/ns3 (docs/tcp-validation.md);
	# its pkg-config files link GSL, SQLite and libxml2 by absolute path.
	libns3-dev
	libgsl-dev
	libsqlite3-dev
	libxml2-dev
	g++
	pkg-config
	# ns-2 2.35, the simulator paper 002 ran: validation/ns2 runs its
	# scenario there beside ours (docs/high-bdp.md).
	ns2
)

# Commands the tests call; a package can be "installed" yet broken, so check both.
COMMANDS=(
	ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-ofctl ovs-appctl
	ovs-testcontroller tshark prometheus promtool iperf3 hping3 ping
	ethtool tcpdump ip mn g++ pkg-config ns
)

log() { printf 'install-deps: %s\n' "$*"; }

# Debian puts some of these under /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

missing_packages=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	if [[ "$status" != "install ok installed" ]]; then
		missing_packages+=("$pkg")
	fi
done

missing_commands=()
for cmd in "${COMMANDS[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing_commands+=("$cmd")
done

if [[ ${#missing_packages[@]} -eq 0 && ${#missing_commands[@]} -eq 0 ]]; then
	log "all ${#PACKAGES[@]} packages and ${#COMMANDS[@]} commands present; nothing to do"
	exit 0
fi

log "missing packages: ${missing_packages[*]:-none}"
log "missing commands: ${missing_commands[*]:-none}"

if [[ $(id -u) -ne 0 ]]; then
	log "ERROR: must run as root to install them (try: sudo $0)" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	log "ERROR: apt-get not found; this script supports Debian/Ubuntu only" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Without this preseed the wireshark-common postinst asks whether
# non-root users may capture, which blocks a non-interactive install.
log "preseeding wireshark-common/install-setuid=false"
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections

log "apt-get update"
apt-get update -q

# Install the whole list, not only the missing part: a missing command with
# an installed package means the package needs repairing.
log "apt-get install ${PACKAGES[*]}"
apt-get install -y -q "${PACKAGES[@]}"

still_missing=()
for cmd in "${COMMANDS[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || still_missing+=("$cmd")
done
if [[ ${#still_missing[@]} -ne 0 ]]; then
	log "ERROR: still missing after install: ${still_missing[*]}" >&2
	exit 1
fi
log "done"
