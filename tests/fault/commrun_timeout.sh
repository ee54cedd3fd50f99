# --timeout stops every rank and exits 124, saying so.
. "$(dirname "$0")/lib.sh"

run_commrun -n 2 --timeout 1 sleep 1000
expect_rc 124
expect_line "$WORK/err" "commrun: timed out after 1 s; stopped every rank"
expect_faster 8
