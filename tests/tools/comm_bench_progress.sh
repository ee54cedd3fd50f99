#!/bin/sh
# comm-bench's progress line: on a terminal (script(1) gives it a pty as
# stderr) rank 0 shows "row i/N" for every row of the sweep and erases it
# again, while stdout keeps only the table; with stderr a file, or under
# commrun (whose relay is a pipe), no progress reaches any output.
#   comm_bench_progress.sh COMM_BENCH COMMRUN WORK_DIR
set -eu
bench=$1 commrun=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
command -v script >/dev/null || fail "script(1) (Debian: bsdutils) is needed to give comm-bench a terminal"
sweep="all_reduce -b 8 -e 64K -f 8 -n 1 -w 0"  # 5 rows: 8 B ... 32 KiB

script -qefc "'$bench' $sweep >table.txt" terminal.txt >/dev/null || fail "comm-bench on a terminal exited $?"
for row in 1 2 3 4 5; do
  grep -q "comm-bench: row $row/5, measuring" terminal.txt || fail "no progress for row $row/5 on the terminal: $(cat -v terminal.txt)"
done
# Each progress line is erased (\r, ESC [K) before the next row or the end.
erasures=$(grep -o "$(printf '\r\033\\[K')" terminal.txt | wc -l)
[ "$erasures" -ge 10 ] || fail "the progress line was erased $erasures times, not at least twice per row"
[ "$(grep -c '^ *[0-9]* *[0-9]* *float32 *sum' table.txt)" -eq 5 ] || fail "stdout lacks the 5 table rows: $(cat table.txt)"
! grep -q "comm-bench: row" table.txt || fail "progress reached stdout: $(cat table.txt)"
echo "terminal: 5 progress updates on stderr, each erased; stdout holds only the table"

"$bench" $sweep >table.txt 2>stderr.txt || fail "comm-bench exited $?"
[ ! -s stderr.txt ] || fail "stderr is a file, yet comm-bench wrote to it: $(cat -v stderr.txt)"
"$commrun" -n 2 --timeout 300 "$bench" $sweep >relayed.txt 2>&1 || fail "commrun comm-bench exited $?"
! grep -q "comm-bench: row" relayed.txt || fail "progress went through commrun's pipe: $(cat -v relayed.txt)"
echo "file and pipe: no progress written"
