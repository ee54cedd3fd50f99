#!/usr/bin/env bash
# agent.sh HOST COMMAND-LINE: commrun's --launcher-agent for the hosts of
# hosts.sh, as ssh is for real ones: runs COMMAND-LINE with sh on HOST
# (host0, host1...; COMM_HOSTS_DIR says where they are). Exits 255, as ssh
# does, when HOST is not one of them. With AGENT_LOG, each command line is
# appended there (for tests of what the command line carries).
set -eu
if [[ ! ${1:-} =~ ^host([0-9]+)$ ]] || [ $# -ne 2 ]; then
  echo "agent.sh: '${1:-}' is not a host of hosts.sh (host0, host1...), or no command line follows it" >&2
  exit 255
fi
if [ ! -f "${COMM_HOSTS_DIR:-/run/comm-hosts}/$1.pid" ]; then
  echo "agent.sh: $1 is not up" >&2
  exit 255
fi
[ -z "${AGENT_LOG:-}" ] || printf '%s\n' "$2" >>"$AGENT_LOG"
exec "$(dirname "$0")/hosts.sh" exec "${BASH_REMATCH[1]}" sh -c "$2"
