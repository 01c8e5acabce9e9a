#!/usr/bin/env bash
# Installs what tric needs to build and test, from Debian 12's packages, when it is missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(cmake make gcc llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev flex bison
          clang-19 libclang-rt-19-dev python3 pkg-config valgrind)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
