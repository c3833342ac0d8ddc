#!/usr/bin/env bash
# Builds the Ollama server (CPU only, cgo) from its Go module, for lore's
# end-to-end tests against a real server. The module zip lacks the vendored
# headers of its llama.cpp, so they come from Debian (nlohmann-json3-dev,
# libstb-dev) and from the Go module github.com/gen2brain/malgo (miniaudio.h).
# The binary is cached: only the first build pays (about 4 minutes on 2 cores).
set -euo pipefail
version=${OLLAMA_VERSION:-v0.17.4}
out=${1:-.cache/ollama/bin}
if [[ -x $out/ollama ]]; then
  exit 0
fi
if [[ ! -f /usr/include/nlohmann/json.hpp || ! -f /usr/include/stb/stb_image.h ]]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nlohmann-json3-dev libstb-dev >/dev/null
fi
malgo=$(go mod download -json github.com/gen2brain/malgo@v0.11.24 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
headers=$(mktemp -d)
trap 'rm -rf "$headers"' EXIT
mkdir -p "$headers/miniaudio"
cp "$malgo/miniaudio.h" "$headers/miniaudio/"
mkdir -p "$out"
CGO_CPPFLAGS="-I$headers -I/usr/include/stb" GOBIN="$(cd "$out" && pwd)" GOFLAGS=-mod=mod \
  go install "github.com/ollama/ollama@$version"
"$out/ollama" --version >/dev/null 2>&1 || true
echo "built $out/ollama ($version)"
