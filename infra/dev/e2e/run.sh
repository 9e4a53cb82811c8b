#!/usr/bin/env bash
# Prickle end-to-end tests: the single entry point `make test` calls.
#
# Starts the local stack (`go run ./infra/dev/local`) on a free port with a throw-away state dir,
# then runs, against its /mcp endpoint:
#   ts/           official TypeScript SDK client (handshake era, 2025-11-25)   node --test
#   py/           official Python SDK client (2026-07-28, plus 2025-11-25 / 2025-06-18)  pytest
#   raw/          wire details over raw HTTP (headers, auth, faults, races, pull wake-ups)  node --test
#   conformance/  @modelcontextprotocol/conformance, --spec-version 2025-11-25 and 2026-07-28
#   web/          approval pages in headless Chromium (playwright-core; its own server on the emulator)  node --test
#   story/        the owners-decide story on this stack: SDK client, dev outbox wake-ups and links, Chromium  node --test
#   owners/       grants, budgets and the audit trail: woken runs (SDK client), the owner in Chromium  node --test
#   slack/        approve inside Slack: signed block_actions / view_submission payloads to /slack/interactivity  node --test
#   claude/       the real Claude Code (pinned) as a woken run, request_step as its --permission-prompt-tool,
#                 against a scripted stand-in of the Messages API on loopback  node --test
#   runner/       prickle-runner (built from infra/cmd/prickle-runner) in webhook and pull mode starting the real Claude Code
#                 per wake-up (stand-in Messages API), the real Codex through codex-run (stand-in Responses API), and
#                 the real Qwen Code, Gemini CLI, Copilot CLI and opencode through agent-run (stand-in OpenAI chat and Gemini APIs),
#                 the owner deciding in Chromium  node --test
#   runner-pull/  of runner/, pull mode and the model-spend cap only (pull.test.mjs, spend.test.mjs): the fault run's  node --test
#   oauth/        the TS SDK's auth() (discovery, registration, PKCE, token) with Chromium as the owner, and
#                 prickle-runner login (the device grant) allowed in Chromium, then revoked  node --test
#   pages/        sign-in, Team Pulse, board, task pages, tool reference in Chromium + axe-core; runs last (moves seeded tasks)  node --test
# and stops the stack (its whole process group) on exit. Logs: $ARTIFACTS (default infra/dev/e2e/artifacts).
#
# Installs nothing: expects `npm ci` in infra/dev/e2e and the project venv (.venv, infra/dev/requirements.txt).
# Usage: infra/dev/e2e/run.sh [suite …] runs those suites (all of them without one; every one under CI).
# Env: E2E_SUITES="ts py raw conformance" also names a subset (not honoured under CI), E2E_RUNNER_FILES
# the runner suite's files to run (their names without .test.mjs; not under CI), PRICKLE_E2E_URL to
# test an already running stack (with PRICKLE_LOCAL_JSON pointing at its local.json) instead of starting one.
# PRICKLE_LOSE_ANSWERS=N is a fault run: the stack loses the answer of one write in N (the write lands, the
# SDK retries), the suites named run (under CI too), and then `invariants` (infra/dev/fault) checks the store.
set -uo pipefail
E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$E2E/../../.." && pwd)"
cd "$ROOT"
export ARTIFACTS="${ARTIFACTS:-$E2E/artifacts}"
rm -rf "$ARTIFACTS"; mkdir -p "$ARTIFACTS"
SUITES="${*:-${E2E_SUITES:-ts py raw conformance web story owners slack claude runner oauth pages}}"
[[ -n "${CI:-}" && -z "${PRICKLE_LOSE_ANSWERS:-}" ]] && SUITES="ts py raw conformance web story owners slack claude runner oauth pages"
PY="${PRICKLE_VENV:-$ROOT/.venv}/bin/python"

die() { echo "e2e: $*" >&2; exit 2; }
[[ -d "$E2E/node_modules/@modelcontextprotocol/sdk" ]] || die "run 'npm ci' in infra/dev/e2e first"
[[ -x "$PY" ]] || die "no venv at ${PRICKLE_VENV:-$ROOT/.venv} (python3 -m venv .venv && .venv/bin/pip install -r infra/dev/requirements.txt)"

STACK_PID=""
STATE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/prickle-e2e.XXXXXX")"
cleanup() {
  if [[ -n "$STACK_PID" ]] && kill -0 "$STACK_PID" 2>/dev/null; then
    kill -TERM -- "-$STACK_PID" 2>/dev/null
    # The whole group, not only the stack: the emulator saves its snapshot into the state dir as it stops.
    for _ in $(seq 1 50); do kill -0 -- "-$STACK_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$STACK_PID" 2>/dev/null
  fi
  # The emulator's own lines and its write log: what a failed suite's requests did.
  for f in local.json emulator.log dynamodb.log; do
    [[ -f "$STATE_DIR/$f" ]] && cp "$STATE_DIR/$f" "$ARTIFACTS/$f" 2>/dev/null
  done
  rm -rf "$STATE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n "${PRICKLE_E2E_URL:-}" ]]; then
  : "${PRICKLE_LOCAL_JSON:?PRICKLE_LOCAL_JSON must point at the local.json of the running stack}"
  export PRICKLE_LOCAL_JSON
  echo "e2e: using the running stack at $PRICKLE_E2E_URL"
else
  PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  export PORT PRICKLE_STATE_DIR="$STATE_DIR" PRICKLE_LOCAL_JSON="$STATE_DIR/local.json"
  # Pull mode's visibility timeout on this stack, short so the runner suite sees an unacknowledged claim come back.
  export PRICKLE_WAKE_VISIBILITY_SECONDS="${PRICKLE_WAKE_VISIBILITY_SECONDS:-10}"
  # The oauth suite serves a client ID metadata document on loopback (local development only).
  export PRICKLE_OAUTH_LOOPBACK_DOCUMENTS=1
  echo "e2e: building the admin CLI"
  go build -o "$STATE_DIR/prickle-admin" ./infra/cmd/prickle-admin >"$ARTIFACTS/admin-build.log" 2>&1 \
    || { cat "$ARTIFACTS/admin-build.log" >&2; die "go build ./infra/cmd/prickle-admin failed"; }
  export PRICKLE_ADMIN="$STATE_DIR/prickle-admin"
  echo "e2e: building prickle-runner"
  go build -o "$STATE_DIR/prickle-runner" ./infra/cmd/prickle-runner >"$ARTIFACTS/runner-build.log" 2>&1 \
    || { cat "$ARTIFACTS/runner-build.log" >&2; die "go build ./infra/cmd/prickle-runner failed"; }
  export PRICKLE_RUNNER="$STATE_DIR/prickle-runner"
  if [[ -n "${PRICKLE_LOSE_ANSWERS:-}" ]]; then
    echo "e2e: fault run, one write's answer in $PRICKLE_LOSE_ANSWERS lost; building the invariant check"
    go build -o "$STATE_DIR/prickle-fault" ./infra/dev/fault >"$ARTIFACTS/fault-build.log" 2>&1 \
      || { cat "$ARTIFACTS/fault-build.log" >&2; die "go build ./infra/dev/fault failed"; }
    SUITES="$SUITES invariants"
  fi
  echo "e2e: starting the local stack on 127.0.0.1:$PORT (state $STATE_DIR, log $ARTIFACTS/local-stack.log)"
  setsid go run ./infra/dev/local >"$ARTIFACTS/local-stack.log" 2>&1 < /dev/null &
  STACK_PID=$!
  deadline=$((SECONDS + ${E2E_STACK_TIMEOUT:-240}))
  until [[ -s "$PRICKLE_LOCAL_JSON" ]] && node -e '
      const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      fetch(j.mcp_url, { method: "GET", signal: AbortSignal.timeout(2000) }).then(() => process.exit(0), () => process.exit(1));
    ' "$PRICKLE_LOCAL_JSON" 2>/dev/null; do
    kill -0 "$STACK_PID" 2>/dev/null || { tail -50 "$ARTIFACTS/local-stack.log" >&2; die "the local stack exited before it was ready"; }
    (( SECONDS < deadline )) || { tail -50 "$ARTIFACTS/local-stack.log" >&2; die "the local stack was not ready after ${E2E_STACK_TIMEOUT:-240}s"; }
    sleep 0.5
  done
  echo "e2e: stack ready: $(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).mcp_url)' "$PRICKLE_LOCAL_JSON")"
fi

declare -A RESULT
run_suite() { # name, command...
  local name="$1"; shift
  echo; echo "=============== $name ==============="
  # Every suite signs the seeded owners in from loopback, and together they ask for more sign-in
  # links in one window than one address may (as a stranger could): on the stack this script
  # started, each suite begins with that address's counts cleared, as an operator would.
  if [[ -n "${PRICKLE_ADMIN:-}" ]]; then
    for o in alice bob carol; do
      "$PRICKLE_ADMIN" reopen-signin --local --owner "$o" --client 127.0.0.1 >/dev/null \
        || die "prickle-admin reopen-signin --owner $o failed"
    done
  fi
  "$@" 2>&1 | tee "$ARTIFACTS/$name.log"
  local rc=${PIPESTATUS[0]}
  RESULT[$name]=$rc
  echo "=============== $name: exit $rc"
}
# The runner suite's files: all of them, or those E2E_RUNNER_FILES names ("agents-opencode claims"; not under CI).
RUNNER_FILES=("$E2E"/runner/*.test.mjs)
if [[ -n "${E2E_RUNNER_FILES:-}" && -z "${CI:-}" ]]; then
  RUNNER_FILES=(); for f in $E2E_RUNNER_FILES; do RUNNER_FILES+=("$E2E/runner/$f.test.mjs"); done
fi
NODE_TEST=(node --test --test-concurrency=1 --test-timeout=300000 --test-reporter=spec --test-reporter-destination=stdout)

for suite in $SUITES; do
  case "$suite" in
    ts) run_suite ts "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/ts.junit.xml" "$E2E"/ts/*.test.mjs ;;
    py) run_suite py "$PY" -m pytest "$E2E/py" -v -rs -p no:cacheprovider --junitxml="$ARTIFACTS/py.junit.xml" ;;
    raw) run_suite raw "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/raw.junit.xml" $(ls "$E2E"/raw/*.test.mjs | sort) ;;
    conformance) run_suite conformance bash "$E2E/conformance/run.sh" ;;
    web) run_suite web "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/web.junit.xml" "$E2E"/web/*.test.mjs ;;
    story) run_suite story "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/story.junit.xml" "$E2E"/story/*.test.mjs ;;
    owners) run_suite owners "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/owners.junit.xml" "$E2E"/owners/*.test.mjs ;;
    slack) run_suite slack "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/slack.junit.xml" "$E2E"/slack/*.test.mjs ;;
    claude) run_suite claude "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/claude.junit.xml" "$E2E"/claude/*.test.mjs ;;
    runner) run_suite runner "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/runner.junit.xml" "${RUNNER_FILES[@]}" ;;
    runner-pull) run_suite runner-pull "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/runner-pull.junit.xml" "$E2E"/runner/pull.test.mjs "$E2E"/runner/spend.test.mjs ;;
    oauth) run_suite oauth "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/oauth.junit.xml" "$E2E"/oauth/*.test.mjs ;;
    invariants) run_suite invariants "$STATE_DIR/prickle-fault" -state "$PRICKLE_LOCAL_JSON" -log "$ARTIFACTS/local-stack.log" ;;
    pages) run_suite pages "${NODE_TEST[@]}" --test-reporter=junit --test-reporter-destination="$ARTIFACTS/pages.junit.xml" "$E2E"/pages/*.test.mjs ;;
    *) die "unknown suite $suite" ;;
  esac
done

echo; echo "=============== e2e summary"
passed=0; failed=0
for suite in $SUITES; do
  rc="${RESULT[$suite]:-1}"
  if [[ "$rc" == 0 ]]; then
    passed=$((passed + 1)); echo "  $suite: ok"
  else
    failed=$((failed + 1)); echo "  $suite: FAILED, exit $rc, log $ARTIFACTS/$suite.log"
  fi
done
echo "e2e suites: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
