# Every line of every rank reaches commrun's stdout or stderr whole, prefixed
# with its rank: short lines, lines far longer than a pipe's buffer written
# by all ranks at once, and a last line without a newline.
. "$(dirname "$0")/lib.sh"

run_commrun -n 3 sh -c '
  echo "out $COMM_RANK"
  echo "err $COMM_RANK" >&2
  head -c 200000 /dev/zero | tr "\0" "$COMM_RANK"; echo
  printf "tail $COMM_RANK"'
expect_rc 0
for rank in 0 1 2; do
  expect_line "$WORK/out" "[$rank] out $rank"
  expect_line "$WORK/err" "[$rank] err $rank"
  expect_line "$WORK/out" "[$rank] tail $rank"
  long=$(awk -v r="$rank" 'index($0, "[" r "] ") == 1 && length($0) == 200004 && substr($0, 5) ~ ("^" r "+$") { n++ }
                          END { print n + 0 }' "$WORK/out")
  [ "$long" -eq 1 ] || fail "rank $rank's 200000-byte line is not one whole prefixed line"
done
[ "$(wc -l <"$WORK/out")" -eq 9 ] || fail "stdout has $(wc -l <"$WORK/out") lines, expected 9"
[ "$(wc -l <"$WORK/err")" -eq 3 ] || fail "stderr has $(wc -l <"$WORK/err") lines, expected 3"
