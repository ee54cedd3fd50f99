#!/usr/bin/env bash
# Check that every tracked C/C++ file under src tools bench tests bindings
# include is formatted as .clang-format (and include/.clang-format) say; the
# CTest test style.clang_format runs it. Prints the offending lines and exits
# 1 when a file differs; exits 77 (CTest's skip) only when clang-format is not
# installed (scripts/install-deps.sh installs it). To fix a file:
#   clang-format -i FILE
# The settings are tuned to Debian 12's clang-format 14; set CLANG_FORMAT to
# use another binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
clang_format="${CLANG_FORMAT:-clang-format}"
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: SKIPPED: $clang_format is not installed (Debian: apt-get install clang-format)"
  exit 77
fi
cd "$root"
dirs=(src tools bench tests bindings include)
pattern='\.(c|cc|cpp|cxx|cu|cuh|h|hh|hpp)$'
# SWIG's generated wrappers (*_wrap.c*) are not ours to format.
generated='_wrap\.c(xx|pp)?$'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${dirs[@]}" | grep -E "$pattern" | grep -Ev "$generated" || true)
else
  mapfile -t files < <(find "${dirs[@]}" -type f 2>/dev/null | grep -E "$pattern" | grep -Ev "$generated" | sort || true)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "check-format: no C/C++ files found under ${dirs[*]} in $root" >&2
  exit 1
fi
if "$clang_format" --dry-run -Werror "${files[@]}"; then
  echo "check-format: ${#files[@]} files formatted as .clang-format says ($("$clang_format" --version))"
else
  echo "check-format: the files above differ from .clang-format's layout; fix with clang-format -i FILE" \
    "($("$clang_format" --version))" >&2
  exit 1
fi
