#!/usr/bin/env bash
# Runs the paper's experiments against the peers and writes
# bench/results/REPORT.md (with --quick: bench/results/quick/REPORT.md).
# Every argument goes to storel-bench; see bench/README.md. Run
# bench/install-peers.sh once first.
#
#   bench/run.sh --quick                   small sizes, about two minutes
#   bench/run.sh                           everything (hours while storel interprets)
#   bench/run.sh --only e2e,threads --threads 1,2,4 --timeout 20m
#   bench/run.sh --only variants           each kernel in several forms against a Go loop
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$here/bin"
# storel itself is rebuilt every time: the harness measures the checkout.
(cd "$here/.." && go build -o bench/bin/storel ./cmd/storel)
(cd "$here" && go build -o bin/storel-bench ./cmd/storel-bench)
# The DuckDB peer runs in e2e only: `--only` without e2e does not build it.
needs_duckdb=1
prev=
for a in "$@"; do
	only=
	case "$prev" in --only) only=$a ;; esac
	case "$a" in --only=*) only=${a#--only=} ;; esac
	if [ -n "$only" ]; then
		case ",$only," in *,e2e,*) needs_duckdb=1 ;; *) needs_duckdb=0 ;; esac
	fi
	prev=$a
done
if [ "$needs_duckdb" = 1 ] && { [ ! -x "$here/bin/duckdb-peer" ] || [ "$here/duckdb/main.go" -nt "$here/bin/duckdb-peer" ]; }; then
	echo "run.sh: building the DuckDB peer (the first build takes minutes)" >&2
	(cd "$here/duckdb" && CGO_ENABLED=1 go build -o ../bin/duckdb-peer .) ||
		echo "run.sh: the DuckDB peer did not build; DuckDB is left out" >&2
fi
cd "$here/.."
exec "$here/bin/storel-bench" "$@"
