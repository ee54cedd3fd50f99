# A rank that crashes is reported as killed by its signal, not as "exited
# with status 1": libfabric's PSM provider (libinfinipath) would otherwise
# catch SIGSEGV, write a .btr file into the working directory and exit 1.
# Checked through commrun and for a program run by itself (another
# launcher), with IPATH_NO_BACKTRACE unset.
. "$(dirname "$0")/lib.sh"
unset IPATH_NO_BACKTRACE
cd "$WORK" || fail "no work directory"

"$COMMRUN" -n 2 "$PROBE" segfault 1 >"$WORK/job.out" 2>&1
rc=$?
[ "$rc" -eq 139 ] || fail "commrun exited $rc, expected 139 (128 + SIGSEGV)"
expect_match "$WORK/job.out" '^commrun: rank 1 \(pid [0-9]+ on [^)]+\) was killed by signal 11 \(Segmentation fault\)'

COMM_RANK=0 "$PROBE" segfault 0 >"$WORK/alone.out" 2>&1
rc=$?
[ "$rc" -eq 139 ] || fail "the program alone exited $rc, expected 139 (128 + SIGSEGV)"

btr=$(find "$WORK" -name '*.btr' | head -1)
[ -z "$btr" ] || fail "a crash handler wrote $btr"
echo "passed"
