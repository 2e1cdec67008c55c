#!/usr/bin/env bash
# Installs what dist/storel-dask needs: Dask distributed for /usr/bin/python3,
# from Debian packages. Idempotent: when the modules import, it does nothing.
set -euo pipefail
py=/usr/bin/python3
if "$py" -c 'import distributed, dask' 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "dist/install.sh: python3-distributed is missing; run as root: apt-get install python3-distributed" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-distributed python3-dask >/dev/null
"$py" -c 'import distributed, dask'
