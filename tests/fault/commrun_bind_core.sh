# --bind-core binds each rank to one core, and two ranks to two different
# cores where commrun may use more than one.
. "$(dirname "$0")/lib.sh"

all=$("$PROBE" cores | sed 's/^cores=//')
run_commrun -n 2 --bind-core "$PROBE" cores
expect_rc 0
for rank in 0 1; do
  mine[$rank]=$(sed -n "s/^\[$rank\] cores=//p" "$WORK/out")
  case "${mine[$rank]}" in
    "" | *,*) fail "rank $rank runs on '${mine[$rank]}', not on one core" ;;
  esac
  case ",$all," in
    *",${mine[$rank]},"*) ;;
    *) fail "rank $rank's core ${mine[$rank]} is not one of commrun's ($all)" ;;
  esac
done
case "$all" in
  *,*) [ "${mine[0]}" != "${mine[1]}" ] || fail "ranks 0 and 1 share core ${mine[0]}" ;;
esac
