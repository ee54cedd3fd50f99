#!/bin/sh
# Write the public ABI of a libcomm build: the exported functions with their
# version nodes and the types comm.h declares, without machine paths.
# Both the release baselines (scripts/abi-baseline.sh) and the check of a
# build (abi_check.sh) come from here, so they are read the same way.
# usage: abi_dump.sh LIBCOMM INCLUDE_DIR GENERATED_INCLUDE_DIR OUT
set -eu
# --hd for both folders, not --hf comm.h: abidw 2.2 drops every enumerator
# of a public enum when the header filter names a single file.
exec abidw --hd "$2" --hd "$3" --drop-private-types --exported-interfaces-only \
  --no-corpus-path --no-comp-dir-path --short-locs --no-elf-needed --out-file "$4" "$1"
