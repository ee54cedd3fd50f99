#!/bin/bash
# Randomized recovery trials: each runs tests/liveness/recovery_trial under
# commrun --keep-going with its own seed, on 2 to 8 ranks and over shm, tcp
# and tcp;ofi_rxm in turn; ranks the seed picks die at random moments and
# the survivors agree, shrink and go on, checking every result. With
# REGROW=1 they also grow back to the job's size after each shrink, with
# the replacements commrun --replace starts.
# Counts the trials that passed, hung (commrun's timeout), computed a wrong
# result, or failed otherwise; exits 1 unless every trial passed.
# usage: recovery_trials.sh COMMRUN RECOVERY_TRIAL TRIALS [FIRST_SEED] [TRIAL_TIMEOUT_S]
#   environment: PATHS, the paths to take in turn (default "shm tcp rxm");
#   REGROW=1 to grow back.
# e.g.:  bench/fault/recovery_trials.sh build/tools/commrun/commrun \
#          build/tests/liveness/recovery_trial 1000
set -u
commrun="$1" program="$2" trials="$3" first="${4:-1}" limit="${5:-120}"
read -r -a paths <<<"${PATHS:-shm tcp rxm}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0 hung=0 wrong=0 failed=0
start=$(date +%s)
for ((seed = first; seed < first + trials; ++seed)); do
  ranks=$((2 + seed % 7))
  path=${paths[$((seed / 7 % ${#paths[@]}))]}
  case $path in
    shm) environment=(COMM_SHM=1) ;;
    tcp) environment=(COMM_PROVIDER=tcp COMM_SHM=0) ;;
    rxm) environment=(COMM_PROVIDER=tcp,ofi_rxm COMM_SHM=0) ;;
  esac
  if [ "${REGROW:-0}" = 1 ]; then
    # A replacement whose grow failed as a member died meanwhile exits 6
    # and is replaced in turn; every rank of the job's size ends ok.
    launch=(--replace $((4 * ranks)))
    arguments=("$seed" 24 regrow)
    expected_status=0
    tolerated='exited with status 6;'
  else
    launch=(--keep-going)
    arguments=("$seed")
    expected_status=137
    tolerated='^$'
  fi
  env "${environment[@]}" COMM_TIMEOUT="${COMM_TIMEOUT:-30}" \
    "$commrun" -n "$ranks" "${launch[@]}" --timeout "$limit" "$program" "${arguments[@]}" >"$out" 2>&1
  status=$?
  survivors=$(sed -n 's/.*plan: .*survivors \([0-9]*\)$/\1/p' "$out" | head -1)
  [ "${REGROW:-0}" = 1 ] && [ -n "$survivors" ] && survivors=$ranks
  oks=$(grep -c ": ok$" "$out")
  verdict=passed
  # A rank commrun had to stop (its --timeout) outlived every deadline.
  if [ "$status" = 124 ] || grep -q "timed out after\|killed by signal 15" "$out"; then
    verdict=hung
  elif grep -q "WRONG" "$out"; then
    verdict=wrong
  elif [ -z "$survivors" ] || [ "$oks" != "$survivors" ] || ! [ "$status" = "$expected_status" ] ||
    grep "exited with status" "$out" | grep -v "^commrun: .*then\|$tolerated" | grep -q .; then
    verdict=failed
  fi
  case $verdict in
    passed) passed=$((passed + 1)) ;;
    hung) hung=$((hung + 1)) ;;
    wrong) wrong=$((wrong + 1)) ;;
    failed) failed=$((failed + 1)) ;;
  esac
  summary=$(grep -m1 "plan:" "$out" | sed 's/^\[[0-9]*\] //')
  echo "seed $seed, $ranks ranks over $path: $verdict (${summary:-no plan}; commrun exited $status)"
  if [ "$verdict" != passed ]; then
    sed 's/^/    /' "$out"
  fi
done
echo "recovery trials: $trials in $(($(date +%s) - start)) s: $passed passed, $hung hung, $wrong wrong, $failed failed otherwise"
[ "$passed" = "$trials" ]
