#!/usr/bin/env bash
# Where the kernel refuses namespaces, hosts.sh exits 77 (CTest's skip) and
# says why, rather than failing or half building hosts: run without
# CAP_SYS_ADMIN and CAP_NET_ADMIN, as in a container that forbids them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v setpriv >/dev/null 2>&1 || { echo "SKIPPED: setpriv (util-linux) is not installed"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root, to drop capabilities that root has"; exit 77; }
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
out=$(COMM_HOSTS_DIR="$state/hosts" setpriv --bounding-set=-sys_admin,-net_admin --inh-caps=-sys_admin,-net_admin \
  "$here/hosts.sh" up 2 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 77 ] || { echo "FAIL: hosts.sh exited $rc without the capabilities, expected 77"; exit 1; }
grep -q '^hosts.sh: SKIPPED: .*namespaces' <<<"$out" || { echo "FAIL: hosts.sh did not say why it skipped"; exit 1; }
[ ! -e "$state/hosts" ] || { echo "FAIL: hosts.sh left $state/hosts behind"; exit 1; }
