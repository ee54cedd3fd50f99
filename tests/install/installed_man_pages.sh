#!/bin/sh
# The manual pages of an installation (made by installed_tools.sh in
# WORK_DIR/prefix) are in share/man/man1 and render: man -l formats each
# one, and the rendering names the tool and one of its own options.
#   installed_man_pages.sh WORK_DIR MANDIR BUILT(ON/OFF)
set -eu
work=$1 mandir=$2 built=$3
if [ "$built" != ON ]; then
  echo "SKIPPED: the man pages were not built (help2man was missing at configure time; Debian: help2man)"
  exit 77
fi
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
for entry in commrun:--nproc-per-node comm-info:--version comm-bench:--maxbytes; do
  tool=${entry%%:*} option=${entry#*:}
  page="$work/prefix/$mandir/man1/$tool.1"
  [ -f "$page" ] || fail "$page was not installed"
  text=$(MANPAGER=cat MANWIDTH=100 man -l "$page" 2>&1) || fail "man -l $page exited $?: $text"
  echo "$text" | grep -q "^NAME" || fail "$tool.1 renders without a NAME section: $text"
  echo "$text" | grep -q "^ *$tool - " || fail "$tool.1 does not name $tool: $text"
  echo "$text" | grep -q -- "$option" || fail "$tool.1 does not document $option: $text"
  echo "$tool.1: installed and rendered by man -l ($(echo "$text" | wc -l) lines)"
done
