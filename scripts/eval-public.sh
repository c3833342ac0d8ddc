#!/usr/bin/env bash
# Keyword-only retrieval on every public question set in ../shared/eval,
# one table: lore's hit@5 and MRR@5 beside the naive baseline's, per set.
# Ranking changes are measured with it, before and after (docs/eval.md).
#
#   scripts/eval-public.sh [LORE] [SETS...]   (default: every set)
#
# The corpora come from the Go module proxy (the sets' README says which
# module and folder) and are cached under .cache/eval/corpus; indexes are
# built in a scratch data folder per run, so the user's are not touched.
set -euo pipefail
lore=${1:-bin/lore}
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
evaldir=${LORE_EVAL_SETS:-$here/../shared/eval}
cache=$here/.cache/eval/corpus
mkdir -p "$cache"
lore=$(cd "$(dirname "$lore")" && pwd)/$(basename "$lore")

moddir() {
  (cd "$cache" && [[ -f go.mod ]] || (cd "$cache" && go mod init evalcorpus >/dev/null 2>&1)
   cd "$cache" && go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
}

# mdcopy SRC DST: the *.md files of SRC, paths kept.
mdcopy() {
  (cd "$1" && find . -name '*.md' -print0 | while IFS= read -r -d '' f; do
    mkdir -p "$2/$(dirname "$f")" && cp "$f" "$2/$f"; done)
  chmod -R u+w "$2"
}

corpus() {
  local set=$1 out=$cache/$1
  [[ -d $out ]] && { echo "$out"; return; }
  case $set in
  go_stdlib) echo "$(go env GOROOT)/src"; return ;;
  prometheus_docs) mdcopy "$(moddir github.com/prometheus/prometheus@v0.316.0)/docs" "$out.tmp" ;;
  argocd_docs) mdcopy "$(moddir github.com/argoproj/argo-cd/v3@v3.5.7)/docs" "$out.tmp" ;;
  docker_cli_docs) mdcopy "$(moddir github.com/docker/cli@v29.9.3+incompatible)/docs" "$out.tmp" ;;
  zh_docs) "$evaldir/build_zh_corpus.sh" "$out.tmp" >/dev/null ;;
  *) echo "eval-public: no corpus known for $set" >&2; return 1 ;;
  esac
  mv "$out.tmp" "$out"
  echo "$out"
}

sets=("$@")
if [[ ${#sets[@]} -eq 0 ]]; then
  for f in "$evaldir"/*.jsonl; do sets+=("$(basename "$f" .jsonl)"); done
fi
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export XDG_DATA_HOME=$data/data XDG_STATE_HOME=$data/state XDG_CONFIG_HOME=$data/config
printf '| set | lore hit@5 | lore MRR@5 | baseline hit@5 | baseline MRR@5 | lines/result |\n|---|---|---|---|---|---|\n'
for set in "${sets[@]}"; do
  dir=$(corpus "$set")
  "$lore" --index "$set" index --embedder none "$dir" >/dev/null 2>&1
  "$lore" --index "$set" search --reranker none --eval "$evaldir/$set.jsonl" --json >"$data/$set.json" 2>"$data/$set.err" || {
    echo "eval-public: $set failed: $(tail -1 "$data/$set.err")" >&2; continue; }
  python3 - "$set" "$data/$set.json" <<'EOF'
import json, sys
s, r = sys.argv[1], json.load(open(sys.argv[2]))
m, b = r["setups"][0]["overall"], r["baseline"]
print(f"| {s} | {m['metrics']['hit@5']:.3f} | {m['top5']['mrr@5']:.3f} | {b['metrics']['hit@5']:.3f} | {b['top5']['mrr@5']:.3f} | {m['top5']['mean_lines']:.1f} |")
EOF
done
