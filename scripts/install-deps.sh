#!/usr/bin/env bash
# Installs what hopctl's tests and demo need on a fresh Debian machine with Go:
# Debian's torch 1.13 (under /usr/bin/python3), torchvision and protobuf for
# the Python bridge, and the Go modules. Idempotent: skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
/usr/bin/python3 -c 'import torchvision' 2>/dev/null || need+=(python3-torchvision)
/usr/bin/python3 -c 'import google.protobuf' 2>/dev/null || need+=(python3-protobuf)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
go mod download
