#!/usr/bin/env bash
# recovery_hosts.sh HOSTS RANKS COMMRUN RECOVERY_TRIAL SEED...: randomized
# recovery trials (tests/liveness/recovery_trial.c) across HOSTS x RANKS
# ranks on hosts simulated by hosts.sh, one commrun --keep-going per host:
# the ranks the seed picks die, the survivors on every host agree, shrink
# and go on, checking every result. Each trial passes when every survivor
# says ok and no rank saw a wrong result. With REGROW=1 each host's commrun
# runs with --replace and the survivors grow back to the job's size with
# the replacements, wherever they start; then every rank must say ok.
# Exits 77 where hosts.sh cannot make hosts. The environment reaches the
# ranks (COMM_PROVIDER...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then
  [ $# -ge 5 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  exec "$here/hosts.sh" run "$1" -- "$0" --inside "$@"
fi
shift
hosts=$1 ranks=$2 commrun=$3 trial=$4
shift 4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0
if [ "${REGROW:-0}" = 1 ]; then
  launch=(--replace $((4 * ranks))) regrow=(24 regrow)
else
  launch=(--keep-going) regrow=()
fi
for seed in "$@"; do
  MULTIHOST_TIMEOUT=120 "$here/commrun_per_host.sh" --inside "$hosts" "$ranks" "$commrun" "${launch[@]}" \
    "$trial" "$seed" "${regrow[@]}" >"$out" 2>&1 || true
  survivors=$(sed -n 's/.*plan: .*survivors \([0-9]*\)$/\1/p' "$out" | head -1)
  [ "${REGROW:-0}" = 1 ] && [ -n "$survivors" ] && survivors=$((hosts * ranks))
  oks=$(grep -c ": ok$" "$out" || true)
  plan=$(grep -m1 "plan:" "$out" | sed 's/^\[[0-9]*\] //' || true)
  if [ -n "$survivors" ] && [ "$oks" = "$survivors" ] && ! grep -q "WRONG" "$out"; then
    echo "seed $seed: passed (${plan})"
  else
    echo "seed $seed: FAILED (${plan:-no plan}; $oks ranks said ok)"
    cat "$out"
    failed=1
  fi
done
exit "$failed"
