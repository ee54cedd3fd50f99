# commrun writes the first failure to the store under "commrun/failed" and
# lets the other ranks finish by themselves within the grace period.
. "$(dirname "$0")/lib.sh"

run_commrun -n 3 "$PROBE" await-failure 1
expect_rc 137
expect_match "$WORK/err" '^commrun: rank 1 \(pid [0-9]+ on [^)]+\) was killed by signal 9 \(Killed\)$'
failure=$(sed -n 's/^commrun: //p' "$WORK/err")
expect_line "$WORK/out" "[0] commrun/failed = $failure"
expect_line "$WORK/out" "[2] commrun/failed = $failure"
