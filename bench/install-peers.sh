#!/usr/bin/env bash
# Installs what the benchmark peers need on a fresh Debian machine, and
# builds the harness. Safe to run again: apt-get and go skip what is there.
#
#   SciPy, NumPy, PyTorch  Debian packages, for /usr/bin/python3
#   DuckDB                 github.com/duckdb/duckdb-go/v2 (its own Go module,
#                          bench/duckdb, cgo; the main module stays light)
#   plotting               gonum.org/v1/plot (bench's Go module)
#
# A taco binary, when one is on PATH, is picked up by the harness; nothing
# here builds TACO.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

need_pkgs=()
for p in python3-scipy python3-numpy python3-torch gcc; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		need_pkgs+=("$p")
	fi
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
	echo "install-peers: installing ${need_pkgs[*]}"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need_pkgs[@]}"
else
	echo "install-peers: Debian packages already installed"
fi
/usr/bin/python3 -c 'import numpy, scipy, torch; print("install-peers: numpy", numpy.__version__, "scipy", scipy.__version__, "torch", torch.__version__)'

echo "install-peers: building the harness and the DuckDB peer (the first DuckDB build takes minutes)"
mkdir -p "$here/bin"
(cd "$here" && go build -o bin/storel-bench ./cmd/storel-bench)
(cd "$here/duckdb" && CGO_ENABLED=1 go build -o ../bin/duckdb-peer .)
(cd "$here/.." && go build -o bench/bin/storel ./cmd/storel)
echo "install-peers: done; binaries in $here/bin"
