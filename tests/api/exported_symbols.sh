#!/bin/sh
# libcomm exports exactly the functions comm.h declares, each under the
# version node of the release that added it, and nothing else, under SONAME
# libcomm.so.0.
# usage: exported_symbols.sh LIBCOMM COMM_H
set -eu
lib="$1" header="$2"

# Functions added after the first release (node COMM_0), with their node.
later="comm_check_version COMM_0.2
comm_cuda_device_count COMM_0.2
comm_failed_rank COMM_0.2
comm_has_feature COMM_0.2
comm_node_count COMM_0.2
comm_node_id COMM_0.2
comm_providers COMM_0.2
comm_set_stream COMM_0.2
comm_setting_count COMM_0.2
comm_setting_info COMM_0.2
comm_split_by_node COMM_0.2
comm_stream COMM_0.2"

declared=$(sed -n 's/^COMM_API[^(]*[ *]\(comm_[a-z0-9_]*\)(.*/\1/p' "$header" | sort)
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sort)
[ -n "$declared" ] || { echo "found no COMM_API function in $header"; exit 1; }

status=0
for f in $declared; do
  node=$(echo "$later" | awk -v f="$f" '$1 == f {print $2}')
  node=${node:-COMM_0}
  echo "$exported" | grep -qx "$f@@$node" || { echo "$f is not exported as $f@@$node"; status=1; }
done
for symbol in $exported; do
  echo "$declared" | grep -qx "${symbol%%@*}" || { echo "exported but not declared in comm.h: $symbol"; status=1; }
done
readelf -d "$lib" | grep -q 'SONAME.*\[libcomm\.so\.0\]' || { echo "SONAME is not libcomm.so.0"; status=1; }
[ "$status" = 0 ] && echo "$(echo "$declared" | wc -l) functions of comm.h exported, nothing else"
exit "$status"
