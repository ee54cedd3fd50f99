#!/bin/sh
# Every function comm.h declares says which statuses it returns: the comment
# right above its declaration has "Errors", "Returns:" or "Cannot fail".
# usage: documented_statuses.sh COMM_H
set -eu
awk '
  /^\/\*/ { comment = ""; in_comment = 1 }
  in_comment { comment = comment $0 "\n" }
  in_comment && /\*\// { in_comment = 0; next }
  /^COMM_API/ {
    match($0, /comm_[a-z0-9_]*\(/)
    name = substr($0, RSTART, RLENGTH - 1)
    if (comment !~ /Errors|Returns:|Cannot fail/) { print name ": no statuses in its comment"; bad = 1 }
    ++functions
  }
  /^$/ { comment = "" }
  END {
    if (functions == 0) { print "no COMM_API function found"; exit 1 }
    if (!bad) print functions " functions, each with its statuses"
    exit bad
  }
' "$1"
