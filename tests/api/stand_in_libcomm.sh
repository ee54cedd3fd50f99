#!/bin/sh
# Build a stand-in for libcomm.so.0 from a comm.h and a symbol map: it
# exports the header's functions under the map's version nodes, each a stub
# that traps, so that its ABI is exactly what the header and map say. With
# VERSION, comm_version and comm_version_string answer it (an "older
# library" for the bindings' tests). Used by abi_check_catches.sh and the
# bindings' older_libcomm tests.
# usage: stand_in_libcomm.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR COMM_MAP OUT [VERSION]
set -eu
cxx="$1" include="$2" generated="$3" map="$4" out="$5" version="${6:-}"
source="$out.cc"
awk -v version="$version" '
  BEGIN {print "#include \"comm.h\""}
  /^COMM_API/ {declaration = 1; answered = version != "" && $0 ~ /[ *]comm_version(_string)?\(void\)/}
  declaration && !answered {
    line = $0
    if (line ~ /\); *$/) sub(/; *$/, " { __builtin_trap(); }", line)
    print line
  }
  declaration && /\); *$/ {declaration = 0}
  END {
    if (version == "") exit
    split(version, part, ".")
    print "unsigned comm_version(void) { return " part[1] * 10000 + part[2] * 100 + part[3] "; }"
    print "const char *comm_version_string(void) { return \"" version "\"; }"
  }' "$include/comm.h" >"$source"
exec "$cxx" -std=c++17 -g -O0 -fPIC -shared -I"$include" -I"$generated" -Wl,--version-script="$map" \
  -Wl,-soname,libcomm.so.0 -o "$out" "$source"
