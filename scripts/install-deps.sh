#!/usr/bin/env bash
# Install the Debian packages comm needs to build and test; idempotent, and
# `apt-get update` runs only when something is missing.
set -euo pipefail

packages=(
  g++ make cmake pkg-config git ca-certificates
  libfabric-dev libfabric-bin libhwloc-dev hwloc libcmocka-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev libssl-dev
  swig python3 python3-dev python3-numpy python3-pytest
  python3-pip python3-venv python3-setuptools python3-wheel
  gnuplot-nox procps iproute2 clang-format
  clang libclang-rt-dev  # the sanitizer and fuzz build (scripts/test-sanitized.sh)
  help2man man-db
  abigail-tools  # the ABI check against the release baselines in abi/ (docs/abi.md)
)
# Java's test jars only matter where a JDK is present (Java is optional).
if command -v javac >/dev/null 2>&1; then packages+=(junit5); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
