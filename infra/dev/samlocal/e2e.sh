#!/usr/bin/env bash
# make e2e-sam: Prickle through the SAM CLI (docs/sam-local.md).
#   1. every sample in events/ given to `sam local invoke` for its function, each answer checked
#      as the RIE replay checks it (infra/dev/rie/replay_test.go with PRICKLE_RIE_SAM=1);
#   2. `sam local start-api` serving /mcp (start-lambda behind mcp): the TypeScript SDK scenario
#      (infra/dev/e2e/ts) and `claude mcp add` listing the 11 tools (infra/dev/e2e/claude/mcp-add.test.mjs).
# Needs a running dockerd (.ci/run starts one); builds the offline base image if it is missing.
# Without Docker: skipped, loudly; in CI (CI=true): a failure.
set -euo pipefail
cd "$(dirname "$0")/../../.."
if ! docker info >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then
    echo "e2e-sam: FAILED: CI=true and no Docker daemon answers (docker info); .ci/run starts one" >&2
    exit 1
  fi
  echo "e2e-sam: SKIPPED: no Docker daemon answers here (docker info); start dockerd to run the sam local tests" >&2
  exit 0
fi
infra/dev/samlocal/base-image.sh
start=$SECONDS
PRICKLE_RIE_SAM=1 go test -count=1 -timeout 40m -tags rie -run '^TestReplayEveryEvent$' ./infra/dev/rie/
echo "e2e-sam: sam local invoke of every events/ sample: $((SECONDS - start)) s"
start=$SECONDS
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
PRICKLE_RIE_STATE_DIR="$state" go run ./infra/dev/rie -sam -e2e -suites "ts claude-mcp-add"
echo "e2e-sam: sam local start-api, TypeScript scenario and claude mcp add: $((SECONDS - start)) s"
