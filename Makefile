# Prickle: `make local` runs the whole stack on this machine; `make test` runs every test.
# Everything it needs is installed into the project (.venv, .tools, infra/dev/e2e/node_modules).

SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
TOOLS := $(CURDIR)/.tools/bin
STATICCHECK_VERSION := v0.8.2
E2E_NODE := infra/dev/e2e/node_modules/.package-lock.json

.PHONY: local agents test lint unit fuzz integration e2e fault e2e-fault deps venv venv-local node tools clean template cfn-lint sam-validate sam-build rie e2e-rie measure load sam-local e2e-sam docs

## local: start the emulator, create tables from template.yaml, seed website-v2, serve /mcp on 127.0.0.1:$${PORT:-3000}
## (installs only the emulator into .venv: infra/dev/requirements-local.txt)
local: venv-local
	go run ./infra/dev/local

## agents: the second command, beside a running `make local`: build prickle-runner and start it for the
## seeded agent alice/writer (AGENTS=alice/writer,alice/builder for more: one runner each) in pull mode,
## its token read from .prickle/local.json, its runs using the claude (or codex) on your PATH
AGENTS ?= alice/writer
agents:
	go build -o .prickle/prickle-runner ./infra/cmd/prickle-runner
	go run ./infra/dev/agents -agents "$(AGENTS)"

## test: lint, unit (incl. the least-privilege test of template.yaml), the fuzz targets for a bounded time,
## store integration against the emulator, e2e through the official MCP clients and the conformance suite,
## the template checks (cfn-lint, sam validate --lint, sam build), the built binaries under the Lambda
## Runtime Interface Emulator, the short load run, and the sam local tests (e2e-sam; needs Docker)
test: deps lint unit fuzz integration e2e-fault template e2e-rie load \
	e2e-sam

deps: venv node tools
	go mod download

# venv-local: the emulator only (make local, integration); venv: everything the tests use
# (the e2e Python client, cfn-lint, the SAM CLI), on top of it.
# When python3 has a pip that can install into another interpreter (pip >= 22.3: --python), the venv
# is made without a pip of its own: ensurepip is 6 s of a first `make local`. (Recursive variables:
# only the venv recipes run python3, not every make, such as sam build's 21.)
HOST_PIP = $(shell python3 -m pip --version 2>/dev/null | awk '{split($$2, v, "."); if (v[1] > 22 || (v[1] == 22 && v[2] >= 3)) print "yes"}')
VENV_FLAGS = $(if $(HOST_PIP),--without-pip)
PIP = $(if $(HOST_PIP),python3 -m pip --python $(PY),$(PY) -m pip)

venv-local: $(VENV)/.installed-local
$(VENV)/.installed-local: infra/dev/requirements-local.txt
	python3 -m venv $(VENV_FLAGS) $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r infra/dev/requirements-local.txt
	touch $@

venv: $(VENV)/.installed
$(VENV)/.installed: infra/dev/requirements.txt $(VENV)/.installed-local
	$(PIP) install --quiet --disable-pip-version-check -r infra/dev/requirements.txt
	touch $@

node: $(E2E_NODE)
$(E2E_NODE): infra/dev/e2e/package.json infra/dev/e2e/package-lock.json
	cd infra/dev/e2e && npm ci --no-audit --no-fund --loglevel=error

tools: $(TOOLS)/staticcheck
$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: tools
	@out=$$(gofmt -l functions shared infra); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go vet -tags integration ./...
	$(TOOLS)/staticcheck ./...
	$(TOOLS)/staticcheck -tags integration ./...

unit:
	go test ./...

## fuzz: each Go fuzz target for FUZZTIME (default 20000x: a count of inputs, not a duration, since Go 1.26's
## coordinator can fail a duration run with "context deadline exceeded" on a busy machine, golang/go#75804;
## -fuzz takes one target per run): tool arguments,
## step canonicalisation, approval links, cookies and sign-in links, the endpoint's requests.
## A failing input is written to the package's testdata/fuzz/ (commit it: plain go test replays it)
FUZZTIME ?= 20000x
FUZZ_TARGETS := FuzzToolArguments:./shared/mcp/catalog/ FuzzCanonical:./shared/domain/step/ FuzzVerify:./shared/auth/link/ \
	FuzzCookie:./shared/auth/session/ FuzzRequest:./shared/mcp/endpoint/
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $${t%%:*} in $${t#*:} for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) "$${t#*:}"; \
	done

## integration: the emulator's patches against moto itself (infra/dev/emulator/test_fastpaths.py), its stop
## (test_launcher_stop.py), then the store and stack against the emulator
integration: venv-local
	$(PY) -m unittest discover -s infra/dev/emulator -p 'test_*.py'
	infra/dev/emulator/with-emulator.sh go test -count=1 -timeout 20m -tags integration ./...

e2e: venv node
	infra/dev/e2e/run.sh

## fault: the fault run: the story suites (story; owners: grants, budgets; runner-pull: pull mode, the
## model-spend cap) against a local stack that loses one write's answer in 5, then in 20
## (PRICKLE_LOSE_ANSWERS; the write lands, the SDK retries), then the invariants over its store
## (infra/dev/fault). The two runs go side by side, each on a stack of its own; each one's output is
## in artifacts/fault/fault-<N>.log (its end printed here), its logs in artifacts/fault/fault-<N>/
FAULT_EVERY ?= 5 20
FAULT_SUITES ?= story owners runner-pull
FAULT_ARTIFACTS = $(CURDIR)/artifacts/fault
fault: venv node
	@mkdir -p $(FAULT_ARTIFACTS); pids=""; for n in $(FAULT_EVERY); do \
		echo "fault: one write's answer in $$n lost: $(FAULT_SUITES) (output in $(FAULT_ARTIFACTS)/fault-$$n.log)"; \
		PRICKLE_LOSE_ANSWERS=$$n ARTIFACTS=$(FAULT_ARTIFACTS)/fault-$$n infra/dev/e2e/run.sh $(FAULT_SUITES) \
			>$(FAULT_ARTIFACTS)/fault-$$n.log 2>&1 & pids="$$pids $$!"; \
	done; rc=0; set -- $$pids; for n in $(FAULT_EVERY); do \
		if wait $$1; then echo "fault 1 in $$n: passed"; else rc=1; echo "fault 1 in $$n: FAILED"; fi; \
		tail -n 40 $(FAULT_ARTIFACTS)/fault-$$n.log; shift; \
	done; exit $$rc

## e2e-fault: what make test runs: e2e and the fault run side by side (the fault run's stacks are its
## own); the fault run's output is printed when both are done
e2e-fault: venv node
	@mkdir -p $(FAULT_ARTIFACTS); $(MAKE) --no-print-directory fault >$(FAULT_ARTIFACTS)/fault.log 2>&1 & fpid=$$!; \
	erc=0; $(MAKE) --no-print-directory e2e || erc=$$?; \
	frc=0; wait $$fpid || frc=$$?; echo "=============== the fault run, beside e2e (exit $$frc)"; \
	cat $(FAULT_ARTIFACTS)/fault.log; test $$erc -eq 0 -a $$frc -eq 0

## load: the short load run: 20 agents for 20 s against a local stack of its own; fails on any
## invariant violation or unexpected answer (the long run: go run ./infra/dev/load -agents 200 -duration 5m)
LOAD_FLAGS ?= -agents 20 -duration 20s
load: venv-local
	go run ./infra/dev/load -start $(LOAD_FLAGS)

clean:
	rm -rf $(VENV) .tools .prickle artifacts infra/dev/e2e/node_modules

# ---- Lambda builds (sam build: BuildMethod makefile, CodeUri is the repo root) ----
# `sam build` runs `make build-<LogicalId>` with ARTIFACTS_DIR set; each target
# writes one stripped linux/arm64 `bootstrap` (provided.al2023, -tags lambda.norpc);
# LAMBDA_GOARCH=amd64 for template.yaml's Architecture=x86_64 (make sam-local).
LAMBDA_GOARCH ?= arm64
LAMBDA_GOFLAGS := -trimpath -buildvcs=false -tags lambda.norpc -ldflags "-s -w"
define lambda-build
	cd $(CURDIR) && GOOS=linux GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 go build $(LAMBDA_GOFLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

build-McpFunction: ; $(call lambda-build,mcp)
build-ReadRoomFunction: ; $(call lambda-build,read_room)
build-GetTaskFunction: ; $(call lambda-build,get_task)
build-HandOffTaskFunction: ; $(call lambda-build,hand_off_task)
build-AcceptTaskFunction: ; $(call lambda-build,accept_task)
build-DeclineTaskFunction: ; $(call lambda-build,decline_task)
build-SaveCheckpointFunction: ; $(call lambda-build,save_checkpoint)
build-RequestStepFunction: ; $(call lambda-build,request_step)
build-ReturnResultFunction: ; $(call lambda-build,return_result)
build-ReviewResultFunction: ; $(call lambda-build,review_result)
build-CancelTaskFunction: ; $(call lambda-build,cancel_task)
build-UpdatePulseFunction: ; $(call lambda-build,update_pulse)
build-WebFunction: ; $(call lambda-build,web)
build-OauthFunction: ; $(call lambda-build,oauth)
build-SlackFunction: ; $(call lambda-build,slack)
build-NotifyFunction: ; $(call lambda-build,notify)
build-WakeupFunction: ; $(call lambda-build,wakeup)
build-RunnerApiFunction: ; $(call lambda-build,runner-api)
build-RouteFunction: ; $(call lambda-build,route)
build-StepExpiryFunction: ; $(call lambda-build,step-expiry)
build-TaskEventsFunction: ; $(call lambda-build,task-events)

# ---- template checks and the Lambda Runtime Interface Emulator ----
SAM := SAM_CLI_TELEMETRY=0 $(CURDIR)/$(VENV)/bin/sam
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d

## template: cfn-lint, sam validate --lint and sam build (no Docker, no AWS account, no credentials),
## in both gateway modes (ApiGateway=rest, the default, and ApiGateway=http)
template: cfn-lint sam-validate sam-build

# sam validate takes no parameters: the http run validates a copy whose ApiGateway default is http.
HTTP_TEMPLATE := .aws-sam/template-http.yaml

cfn-lint: venv
	$(VENV)/bin/cfn-lint template.yaml infra/routing/template.yaml
	$(VENV)/bin/cfn-lint --parameters ApiGateway=http -- template.yaml

sam-validate: venv
	$(SAM) validate --lint
	mkdir -p .aws-sam && sed 's/^    Default: rest$$/    Default: http/' template.yaml > $(HTTP_TEMPLATE)
	grep -q '^    Default: http$$' $(HTTP_TEMPLATE)
	$(SAM) validate --lint -t $(HTTP_TEMPLATE)

sam-build: venv
	$(SAM) build --parameter-overrides ApiGateway=http
	$(SAM) build

rie: $(TOOLS)/aws-lambda-rie
$(TOOLS)/aws-lambda-rie:
	GOBIN=$(TOOLS) go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

## e2e-rie: every function's bootstrap under its own aws-lambda-rie; the TS and Python MCP client
## scenarios in both gateway modes (REST: the header router; HTTP API: payload 2.0 events, every tool
## call through mcp); every events/ sample replayed
e2e-rie: venv node rie
	go vet -tags rie ./infra/dev/rie/
	go run ./infra/dev/rie -e2e
	go run ./infra/dev/rie -e2e -gateway http
	go test -count=1 -tags rie ./infra/dev/rie/

## sam-local: Prickle the SAM way (docs/sam-local.md; needs Docker): the offline base
## image, sam build for x86_64, the emulator (unless PRICKLE_DYNAMODB_ENDPOINT names one), tables and
## seed, the env-vars file, then sam local start-api (/mcp) and start-lambda (mcp's tool calls) with
## warm containers; files in .prickle/sam-local
sam-local: venv
	infra/dev/samlocal/base-image.sh
	go run ./infra/dev/rie -sam

## e2e-sam: every events/ sample through sam local invoke, and sam local start-api serving the
## TypeScript scenario and claude mcp add (skipped without Docker, failed in CI)
e2e-sam: venv node
	infra/dev/samlocal/e2e.sh

## docs: the parts of the docs the tool catalog decides (README's tool table, docs/tools.md's reference);
## go test ./infra/dev/docgen fails when they are stale
docs:
	go run ./infra/dev/docgen

## measure: binary sizes and RIE init durations, as the markdown table of docs/measurements.md
measure: venv rie
	infra/dev/measure/measure.sh
