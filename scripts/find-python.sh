#!/bin/sh
# Prints the path of a Python interpreter that can import torch.
# Debian's python3-torch installs under /usr/bin/python3, which is often not
# the first python3 on PATH.
for p in "$HOPCTL_PYTHON" /usr/bin/python3 python3 python; do
  [ -n "$p" ] || continue
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' >/dev/null 2>&1; then
    command -v "$p"; exit 0
  fi
done
echo "find-python.sh: no Python with torch found (apt-get install python3-torch)" >&2
echo false
