# commrun --hosts through an agent that runs the command line here (two
# "hosts" that are this machine): the agent gets HOST and one shell command
# line, each host's commrun gets its node rank, settings travel with it, and
# the ranks meet through one store. Usage errors of --hosts/--hostfile exit 2
# saying what is wrong. (tests/multihost runs it across namespace hosts.)
. "$(dirname "$0")/lib.sh"

cat >"$WORK/agent" <<'AGENT'
#!/bin/sh
echo "$1" >>"${0%/*}/agent.hosts"
exec sh -c "$2"
AGENT
chmod +x "$WORK/agent"
port=$("$PROBE" free-port)
COMM_LOG_LEVEL=warn FI_LOG_LEVEL=warn run_commrun -n 2 --hosts here,there --launcher-agent "$WORK/agent" \
  --master-addr 127.0.0.1 --master-port "$port" --timeout 120 \
  sh -c '"$0" rendezvous && echo "rank $COMM_RANK: COMM_LOG_LEVEL=$COMM_LOG_LEVEL FI_LOG_LEVEL=$FI_LOG_LEVEL"' "$PROBE"
expect_rc 0
for rank in 0 1 2 3; do
  expect_line "$WORK/out" "[$rank] rank=$rank size=4 local=$((rank % 2))/2 master=127.0.0.1:$port met every rank"
  expect_line "$WORK/out" "[$rank] rank $rank: COMM_LOG_LEVEL=warn FI_LOG_LEVEL=warn"
done
[ "$(sort "$WORK/agent.hosts" | tr '\n' ' ')" = "here there " ] || fail "the agent was not run once per host"

run_commrun -n 1 --hosts a,b --nnodes 2 true
expect_rc 2
expect_match "$WORK/err" 'leave out --nnodes and --node-rank'
printf 'node1 slots=4\n' >"$WORK/hostfile"
run_commrun -n 1 --hostfile "$WORK/hostfile" true
expect_rc 2
expect_match "$WORK/err" "hostfile:1: 'slots=4' after the host name"
run_commrun -n 1 --hosts a --launcher-agent /nonexistent/agent true
expect_rc 1
expect_match "$WORK/err" 'launcher agent /nonexistent/agent: command not found'
