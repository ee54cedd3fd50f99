#!/bin/sh
# abi_check.sh fails when the ABI breaks: it is run on small stand-ins for
# libcomm (stand_in_libcomm.sh), built from a copy of comm.h and of the symbol
# map with one change each, and must pass the unchanged copy,
# refuse an enumerator's value changed, a return or parameter type changed,
# a function taken out of the map, moved to another version node or added
# to a released one, and accept a
# function added in a new node and an enumerator added.
# usage: abi_check_catches.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR COMM_MAP BASELINE_DIR
set -eu
cxx="$1" include="$2" generated="$3" map="$4" baselines="$5"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d /tmp/comm-abi-catches-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
failures=0

# case NAME EXPECT(pass|fail) MESSAGE_PATTERN SED_ON_HEADER SED_ON_MAP
case_() {
  name="$1" expect="$2" pattern="$3"
  mkdir -p "$scratch/$name/include"
  sed "$4" "$include/comm.h" >"$scratch/$name/include/comm.h"
  sed "$5" "$map" >"$scratch/$name/comm.map"
  if cmp -s "$include/comm.h" "$scratch/$name/include/comm.h" && cmp -s "$map" "$scratch/$name/comm.map" \
    && [ "$name" != unchanged ]; then
    echo "FAIL $name: its edit changed nothing (comm.h or comm.map moved on: update this case)"
    failures=$((failures + 1)); return
  fi
  "$here/stand_in_libcomm.sh" "$cxx" "$scratch/$name/include" "$generated" "$scratch/$name/comm.map" \
    "$scratch/$name/libcomm.so.0"
  if "$here/abi_check.sh" "$scratch/$name/libcomm.so.0" "$scratch/$name/include" "$generated" "$baselines" \
    >"$scratch/$name/out" 2>&1; then got=pass; else got=fail; fi
  if [ "$got" = "$expect" ] && grep -q -- "$pattern" "$scratch/$name/out"; then
    echo "ok   $name: $(tail -n 1 "$scratch/$name/out" | cut -c1-160)"
  else
    echo "FAIL $name: abi_check.sh should $expect, saying /$pattern/; it said:"
    sed 's/^/     /' "$scratch/$name/out"
    failures=$((failures + 1))
  fi
}

new_function='/^COMM_API comm_status_t comm_setting_count/i COMM_API comm_status_t comm_abi_probe(int *out);'
case_ unchanged pass "compatible with" '' ''
case_ enumerator_value fail "COMM_OP_PROD" 's/COMM_OP_PROD = 1,/COMM_OP_PROD = 9,/' ''
case_ return_type fail "comm_dtype_size" 's/^COMM_API size_t comm_dtype_size(/COMM_API unsigned comm_dtype_size(/' ''
case_ parameter_type fail "comm_set_timeout" 's/^\(COMM_API comm_status_t comm_set_timeout(comm_t \*comm, \)int64_t /\1int32_t /' ''
case_ symbol_left_out_of_map fail "removed" '' '/^ *comm_barrier;/d'
case_ function_moved_to_new_node fail "removed" '' '/^ *comm_barrier;/d; s/^\( *\)comm_setting_count;/&\n\1comm_barrier;/'
case_ function_in_released_node fail "comm_abi_probe added to COMM_0.2" "$new_function" 's/^\( *\)comm_check_version;/&\n\1comm_abi_probe;/'
case_ function_in_new_node pass "comm_abi_probe in COMM_" "$new_function" 's/^\( *\)comm_setting_count;/&\n\1comm_abi_probe;/'
case_ enumerator_added pass "compatible with" 's/COMM_FEATURE_CUDA = 0 /COMM_FEATURE_CUDA = 0, COMM_FEATURE_ABI_PROBE = 1 /' ''

[ "$failures" = 0 ] || { echo "$failures case(s) wrong"; exit 1; }
