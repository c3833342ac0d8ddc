#!/usr/bin/env bash
# Builds the Weaviate server (pure Go) from its Go module, for work on a
# Weaviate cluster backend (issue 27). Its go.mod has no replace directives,
# so go install of the module at a version works; only the Go module proxy
# is needed. The binary (about 190 MB) is cached: only the first build pays
# (docs/weaviate.md has the time on 2 cores).
set -euo pipefail
version=${WEAVIATE_VERSION:-v1.39.0}
out=${1:-.cache/weaviate/bin}
if [[ -x $out/weaviate-server ]]; then
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "build-weaviate: go is not on PATH" >&2
  exit 1
fi
mkdir -p "$out"
start=$SECONDS
if ! GOBIN="$(cd "$out" && pwd)" GOFLAGS=-mod=mod \
  go install "github.com/weaviate/weaviate/cmd/weaviate-server@$version"; then
  echo "build-weaviate: go install of github.com/weaviate/weaviate/cmd/weaviate-server@$version failed" >&2
  exit 1
fi
"$out/weaviate-server" --help >/dev/null 2>&1 || true
echo "built $out/weaviate-server ($version) in $((SECONDS - start))s, $(du -m "$out/weaviate-server" | cut -f1) MB"
