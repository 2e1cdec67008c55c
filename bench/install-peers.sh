#!/usr/bin/env bash
# Installs what the benchmark peers need on a fresh Debian machine, and
# builds the harness. Safe to run again: apt-get and go skip what is there.
#
#   SciPy, NumPy, PyTorch  Debian packages, for /usr/bin/python3
#   DuckDB                 github.com/duckdb/duckdb-go/v2 (its own Go module,
#                          bench/duckdb, cgo; the main module stays light)
#   plotting               gonum.org/v1/plot (bench's Go module)
#
#   TACO                   with --taco [GITDIR]: built from source (cmake,
#                          g++; commit 2b8ece4c, the one measured) out of
#                          GITDIR, a git directory of tensor-compiler/taco
#                          (default: cloned from GitHub), Release, OpenMP
#                          and Python off, into bench/bin/taco; a few
#                          minutes on 2 cores. Without it the harness uses
#                          a taco on PATH, if any.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

taco=0
taco_git=https://github.com/tensor-compiler/taco
if [ "${1:-}" = --taco ]; then
	taco=1
	if [ -n "${2:-}" ]; then taco_git=$2; fi
fi
taco_commit=2b8ece4c

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

need_pkgs=()
pkgs=(python3-scipy python3-numpy python3-torch gcc)
if [ "$taco" = 1 ]; then pkgs+=(cmake g++ git); fi
for p in "${pkgs[@]}"; do
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

if [ "$taco" = 1 ]; then
	src="$here/bin/taco-src"
	echo "install-peers: building TACO $taco_commit in $src"
	[ -d "$src/.git" ] || git clone -q "$taco_git" "$src"
	git -C "$src" checkout -q "$taco_commit"
	# Python is off, and its bindings' submodule is not fetched: cmake
	# still reads the submodule's directory.
	mkdir -p "$src/python_bindings/pybind11"
	[ -f "$src/python_bindings/pybind11/CMakeLists.txt" ] || echo "# empty: PYTHON=OFF" > "$src/python_bindings/pybind11/CMakeLists.txt"
	mkdir -p "$src/build"
	(cd "$src/build" && cmake -DCMAKE_BUILD_TYPE=Release -DOPENMP=OFF -DPYTHON=OFF -DGIT_SUBMODULE=OFF .. >/dev/null && make -j"$(nproc)" taco-tool >/dev/null)
	ln -sf "$src/build/bin/taco" "$here/bin/taco"
	echo "install-peers: $("$here/bin/taco" -version 2>&1 | head -n 1)"
fi
echo "install-peers: done; binaries in $here/bin"
