#!/usr/bin/env bash
# compare.sh VERSION...: BenchmarkANN and TestCoderDeleteAfterImport against
# each given version of github.com/coder/hnsw (a tag, "latest", or any
# revision the Go module proxy serves), one after the other, without
# touching bench/go.mod. A build holds one version of a module, so each
# version runs in a temporary copy of the bench module.
#
#   bench/hnsw/compare.sh v0.6.1 latest
#
# BENCH=ANN/10k runs only the small size; extra go test flags go in
# GOTESTFLAGS, e.g. GOTESTFLAGS=-tags=lorehnsw.
set -euo pipefail
[[ $# -gt 0 ]] || { sed -n 2,11p "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in "$@"; do
  rm -rf "$tmp/m" && mkdir -p "$tmp/m/hnsw"
  cp "$root/bench/go.mod" "$root/bench/go.sum" "$tmp/m/"
  cp "$here"/*.go "$tmp/m/hnsw/"
  (
    cd "$tmp/m"
    go mod edit -replace "github.com/lore-cli/lore=$root"
    go get "github.com/coder/hnsw@$v"
    echo "== github.com/coder/hnsw $(go list -m -f '{{.Version}}' github.com/coder/hnsw) (asked for $v)"
    # shellcheck disable=SC2086
    go test ${GOTESTFLAGS:-} -count=1 -run CoderDeleteAfterImport -v -bench "${BENCH:-ANN}" -benchtime 1x -timeout 60m ./hnsw/
  )
done
