#!/usr/bin/env bash
# Prints the markdown table of docs/measurements.md, "Size and cold start": each function's binary size
# (the linux/arm64 bootstrap `sam build` makes, and the native build the
# emulator runs) and the INIT duration aws-lambda-rie reports for its first
# invocation (`INIT REPORT(durationMs: …)`). Targets: ≤ 15 MB, ≤ 50 ms.
# Usage: infra/dev/measure/measure.sh   (from the repo root; needs `make venv rie`)
set -euo pipefail
cd "$(dirname "$0")/../../.."
SAM_CLI_TELEMETRY=0 .venv/bin/sam build >/dev/null
go run ./infra/dev/rie -measure
