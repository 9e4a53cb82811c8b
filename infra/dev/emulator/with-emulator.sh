#!/usr/bin/env bash
# Runs a command with a fresh DynamoDB emulator (moto, one request at a time) on a
# free loopback port, exported as PRICKLE_DYNAMODB_ENDPOINT; stops it after.
# With PRICKLE_DYNAMODB_ENDPOINT already set, runs the command against that endpoint.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
if [ -n "${PRICKLE_DYNAMODB_ENDPOINT:-}" ]; then exec "$@"; fi

port=$("$root/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log="$root/artifacts/moto-$port.log"
mkdir -p "$root/artifacts"
"$root/.venv/bin/python" "$root/infra/dev/emulator/launcher.py" --host 127.0.0.1 --port "$port" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 $pid 2>/dev/null; then echo "emulator exited; see $log" >&2; cat "$log" >&2; exit 1; fi
  sleep 0.1
done
export PRICKLE_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
echo "emulator: $PRICKLE_DYNAMODB_ENDPOINT (log $log)"
"$@"
