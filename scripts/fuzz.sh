#!/usr/bin/env bash
# Fuzz the decoders of what peers and strangers send (tests/fuzz: the store's
# request decoder, comm's tcp wire header, the handshake) with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer for SECONDS each (default
# 60), starting from the committed seed corpus: the fuzz part of
# scripts/test-sanitized.sh, longer. A crash leaves its input in
# build-sanitize/tests/fuzz/<target>-crash-*; copy it into
# tests/fuzz/corpus/<target>/ with the fix so every build replays it.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
COMM_FUZZ_SECONDS="${1:-60}" exec "$root/scripts/test-sanitized.sh" -R '^fuzz\.'
