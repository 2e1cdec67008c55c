#!/usr/bin/env bash
# Runs the paper's experiments against the peers and writes
# bench/results/REPORT.md (with --quick: bench/results/quick/REPORT.md).
# Every argument goes to storel-bench; see bench/README.md. Run
# bench/install-peers.sh once first.
#
#   bench/run.sh --quick                   small sizes, about two minutes
#   bench/run.sh                           everything (hours while storel interprets)
#   bench/run.sh --only e2e,threads --threads 1,2,4 --timeout 20m
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$here/bin"
# storel itself is rebuilt every time: the harness measures the checkout.
(cd "$here/.." && go build -o bench/bin/storel ./cmd/storel)
(cd "$here" && go build -o bin/storel-bench ./cmd/storel-bench)
if [ ! -x "$here/bin/duckdb-peer" ] || [ "$here/duckdb/main.go" -nt "$here/bin/duckdb-peer" ]; then
	echo "run.sh: building the DuckDB peer (the first build takes minutes)" >&2
	(cd "$here/duckdb" && CGO_ENABLED=1 go build -o ../bin/duckdb-peer .) ||
		echo "run.sh: the DuckDB peer did not build; DuckDB is left out" >&2
fi
cd "$here/.."
exec "$here/bin/storel-bench" "$@"
