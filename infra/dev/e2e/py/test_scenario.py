"""Prickle through the official Python MCP SDK (`mcp==2.3.0`).

mcp 2.3.0 speaks both eras: `Client(..., mode="auto")` probes `server/discover` at 2026-07-28
(stateless, `_meta` + Mcp-Method/Mcp-Name headers) and falls back to the initialize handshake.
The scenario runs at 2026-07-28 and asserts that era was negotiated; a second client pins
mode="legacy" (initialize, 2025-11-25), and a raw-HTTP check drives a 2025-06-18 handshake.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

E2E = Path(__file__).resolve().parent.parent
ROOT = E2E.parents[2]
SCHEMAS = ROOT / "shared" / "mcp" / "catalog" / "schemas"
PROJECT = "website-v2"
TOOLS = sorted([
    "read_room", "get_task", "hand_off_task", "accept_task", "decline_task", "save_checkpoint",
    "request_step", "return_result", "review_result", "cancel_task", "update_pulse",
])
SEED_TOOLS = ["request_step", "return_result", "update_pulse"]


def _local_json() -> Path:
    if os.environ.get("PRICKLE_LOCAL_JSON"):
        return Path(os.environ["PRICKLE_LOCAL_JSON"])
    return Path(os.environ.get("PRICKLE_STATE_DIR", ROOT / ".prickle")) / "local.json"


def _load_stack() -> dict[str, Any] | None:
    path = _local_json()
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI: no local stack ({path} missing)")
        return None
    return json.loads(path.read_text())


STACK = _load_stack()
pytestmark = [
    pytest.mark.skipif(STACK is None, reason=f"no local stack: {_local_json()} not found"),
    pytest.mark.anyio,
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def uniq(prefix: str = "e2e-py") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def schema(tool: str, kind: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{tool}.{kind}.json").read_text())


def admin(*args: str) -> Any:
    cmd = [os.environ["PRICKLE_ADMIN"], *args, "--local"] if os.environ.get("PRICKLE_ADMIN") else ["go", "run", "./infra/cmd/prickle-admin", *args, "--local"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"admin {' '.join(args)}: {out.stderr}"
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return out.stdout.strip()


@asynccontextmanager
async def connect(token: str, mode: str = "auto"):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(STACK["mcp_url"], http_client=http), mode=mode) as client:
            yield client


class Agent:
    """A connected client plus result checks against the listed outputSchemas."""

    def __init__(self, client: Client, tools: list[Any]):
        self.client = client
        self.validators = {
            t.name: Draft202012Validator(t.output_schema, format_checker=FormatChecker()) for t in tools if t.output_schema
        }

    async def call(self, name: str, args: dict[str, Any]):
        return await self.client.call_tool(name, args)

    async def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        r = await self.call(name, args)
        text = next((c.text for c in r.content if getattr(c, "type", None) == "text"), None)
        assert not r.is_error, f"{name} isError: {text}"
        assert r.structured_content is not None, f"{name}: no structuredContent"
        errors = sorted(self.validators[name].iter_errors(r.structured_content), key=str)
        assert not errors, f"{name}: structuredContent invalid: {[e.message for e in errors][:5]}"
        assert text is not None and json.loads(text) == r.structured_content, f"{name}: text != structuredContent"
        return r.structured_content

    async def permission(self, args: dict[str, Any], seed: Agent) -> dict[str, Any]:
        """request_step with a run token, as a permission layer reads it: one text block holding
        the JSON (valid against the seed outputSchema an agent token's list carries), no structuredContent."""
        r = await self.call("request_step", args)
        assert not r.is_error, f"request_step isError: {r.content}"
        assert r.structured_content is None, "a run token's request_step answer carries no structuredContent"
        assert len(r.content) == 1 and r.content[0].type == "text", f"exactly one text block: {r.content}"
        answer = json.loads(r.content[0].text)
        errors = sorted(seed.validators["request_step"].iter_errors(answer), key=str)
        assert not errors, f"request_step text invalid: {[e.message for e in errors][:5]}"
        return answer

    async def refused(self, name: str, args: dict[str, Any], *mention: str) -> str:
        r = await self.call(name, args)
        text = next((c.text for c in r.content if getattr(c, "type", None) == "text"), "")
        assert r.is_error, f"{name}: expected isError, got {r.structured_content}"
        for m in mention:
            assert m.lower() in text.lower(), f"{name}: refusal should mention {m!r}: {text}"
        return text

    async def rejected(self, name: str, args: dict[str, Any], *mention: str) -> str:
        """Refused as a domain error (isError) or as invalid params (-32602)."""
        try:
            return await self.refused(name, args, *mention)
        except MCPError as e:
            assert e.code == -32602, f"{name}: {e.code} {e}"
            return str(e)


@asynccontextmanager
async def agent(token: str, mode: str = "auto"):
    async with connect(token, mode) as client:
        tools = (await client.list_tools()).tools
        yield Agent(client, tools)


def packet(**over: Any) -> dict[str, Any]:
    return {"task": f"py {uniq()}", "deliverable_type": "answer", "acceptance_criteria": ["It is answered."], **over}


async def test_python_sdk_speaks_2026_07_28_and_lists_the_catalog():
    async with connect(STACK["tokens"]["bob/reviewer"]) as client:
        assert client.protocol_version == "2026-07-28"
        tools = (await client.list_tools()).tools
        assert sorted(t.name for t in tools) == TOOLS
        by_name = {t.name: t for t in tools}
        for name in SEED_TOOLS:
            assert by_name[name].input_schema == schema(name, "input"), name
            assert by_name[name].output_schema == schema(name, "output"), name
        for t in tools:
            assert t.output_schema, f"{t.name} has no outputSchema"


async def test_python_sdk_legacy_mode_initializes_at_2025_11_25():
    async with agent(STACK["tokens"]["alice/writer"], mode="legacy") as w:
        assert w.client.protocol_version == "2025-11-25"
        out = await w.ok("get_task", {"task_id": "example-task-id"})
        assert out["task"]["assignee"] == "alice/writer"


async def test_every_tool_two_agents_at_2026_07_28():
    async with agent(STACK["tokens"]["bob/reviewer"]) as bob, agent(STACK["tokens"]["alice/builder"]) as builder:
        assert bob.client.protocol_version == "2026-07-28"
        # hand_off_task → accept_task → save_checkpoint
        task = (await bob.ok("hand_off_task", {"project": PROJECT, "assignee": "alice/builder", "packet": packet(deliverable_type="code")}))["task"]
        assert task["state"] == "routed" and task["requester"] == "bob/reviewer"
        await bob.refused("accept_task", {"task_id": task["id"]})
        assert (await builder.ok("accept_task", {"task_id": task["id"]}))["task"]["state"] == "accepted"
        cp = await builder.ok("save_checkpoint", {"task_id": task["id"], "progress": "Half done.", "next_steps": ["Finish."], "waiting_on": "human"})
        assert cp["task"]["state"] == "waiting" and cp["task"]["waiting_on"] == "human"
        cp = await builder.ok("save_checkpoint", {"task_id": task["id"], "progress": "Unblocked."})
        assert cp["task"]["state"] == "working" and cp["task"]["waiting_on"] is None

        # request_step: agent token refused; run token → pending / deny
        await builder.refused("request_step", {"tool_name": "Bash", "input": {"command": "ls"}})
        run = admin("start-run", "--agent", "alice/builder", "--task", task["id"])
        async with agent(run["run_token"]) as runner:
            assert "request_step" not in runner.validators, "a run token sees request_step without outputSchema"
            step = await runner.permission({"tool_name": "Bash", "input": {"command": f"rm -rf build/{uniq()}"}, "kind": "destructive", "reason": "Clean."}, builder)
            assert step["status"] == "pending" and step["behavior"] == "deny"

        # evidence rules, then return_result → review rework → return → accept
        await builder.refused("return_result", {"task_id": task["id"], "summary": "x", "evidence": [{"kind": "note", "summary": "trust me"}]}, "code")
        await builder.rejected("return_result", {"task_id": task["id"], "summary": "x", "evidence": [{"kind": "commit", "summary": "abc"}]})
        await builder.rejected("return_result", {"task_id": task["id"], "summary": "x", "evidence": [{"kind": "commit", "summary": "abc", "url": "https://example.com/c/abc"}], "provenance": "owner_approved"})
        ev = [{"kind": "test_output", "summary": "pytest passed", "content": "3 passed"}]
        assert (await builder.ok("return_result", {"task_id": task["id"], "summary": "Done.", "evidence": ev}))["task"]["state"] == "verifying"
        await builder.refused("review_result", {"task_id": task["id"], "verdict": "accept"})
        assert (await bob.ok("review_result", {"task_id": task["id"], "verdict": "rework", "feedback": "More tests."}))["task"]["state"] == "working"
        assert (await builder.ok("return_result", {"task_id": task["id"], "summary": "Done again.", "evidence": ev}))["task"]["state"] == "verifying"
        assert (await bob.ok("review_result", {"task_id": task["id"], "verdict": "accept"}))["task"]["state"] == "completed"
        got = await builder.ok("get_task", {"task_id": task["id"]})
        actions = [h["action"] for h in got["history"]]
        for a in ["hand_off", "accept", "checkpoint", "return_result", "review_rework", "review_accept"]:
            assert a in actions, f"{a} missing from history {actions}"
        assert actions.count("return_result") == 2

        # decline and cancel
        t2 = (await bob.ok("hand_off_task", {"project": PROJECT, "assignee": "alice/builder", "packet": packet()}))["task"]
        assert (await builder.ok("decline_task", {"task_id": t2["id"], "reason": "Not mine."}))["task"]["state"] == "rejected"
        t3 = (await bob.ok("hand_off_task", {"project": PROJECT, "assignee": "alice/builder", "packet": packet()}))["task"]
        await builder.refused("cancel_task", {"task_id": t3["id"], "reason": "no"})
        assert (await bob.ok("cancel_task", {"task_id": t3["id"], "reason": "Moved."}))["task"]["state"] == "cancelled"

        # update_pulse → read_room of a teammate
        doing = f"py pulse {uniq()}"
        await builder.ok("update_pulse", {"project": PROJECT, "doing": doing, "task_id": task["id"]})
        room = await bob.ok("read_room", {"project": PROJECT, "limit": 5})
        mine = [p for p in room["pulse"] if p["agent_id"] == "alice/builder"]
        assert mine and mine[0]["doing"] == doing and mine[0]["task_id"] == task["id"]
        assert len(room["tasks"]) <= 5


async def test_refusals_name_the_task_state():
    """Wrong caller and wrong state are refused with a message naming the task's state."""
    async with agent(STACK["tokens"]["bob/reviewer"]) as bob, agent(STACK["tokens"]["alice/writer"]) as writer:
        t = (await bob.ok("hand_off_task", {"project": PROJECT, "assignee": "alice/writer", "packet": packet()}))["task"]
        await writer.ok("accept_task", {"task_id": t["id"]})
        await writer.refused("accept_task", {"task_id": t["id"]}, "accepted")  # wrong state
        await bob.refused("save_checkpoint", {"task_id": t["id"], "progress": "x"}, "accepted")  # wrong caller


async def test_schema_violation_is_invalid_params_naming_the_field():
    async with agent(STACK["tokens"]["bob/reviewer"]) as bob:
        with pytest.raises(MCPError) as e:
            await bob.call("read_room", {"project": PROJECT, "role": "boss"})
        assert e.value.code == -32602 and "role" in str(e.value)


def _post(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    req = urllib.request.Request(
        STACK["mcp_url"], data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            raw = res.read().decode()
            status, hdrs = res.status, dict(res.headers)
    except urllib.error.HTTPError as err:
        raw, status, hdrs = err.read().decode(), err.code, dict(err.headers)
    if raw.startswith("event:") or raw.startswith("data:"):
        raw = next(line[5:].strip() for line in raw.splitlines() if line.startswith("data:"))
    return status, hdrs, (json.loads(raw) if raw.strip() else None)


def test_2025_06_18_initialize_and_tools_call_raw_http():
    auth = {"Authorization": f"Bearer {STACK['tokens']['alice/writer']}"}
    status, hdrs, init = _post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e-py-raw", "version": "0"}}}, auth)
    assert status == 200, init
    assert init["result"]["protocolVersion"] == "2025-06-18"
    headers = {**auth, "MCP-Protocol-Version": "2025-06-18"}
    sid = {k.lower(): v for k, v in hdrs.items()}.get("mcp-session-id")
    if sid:
        headers["Mcp-Session-Id"] = sid
    status, _, _ = _post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    assert status in (200, 202, 204)
    status, _, listed = _post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
    assert status == 200 and sorted(t["name"] for t in listed["result"]["tools"]) == TOOLS
    status, _, called = _post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_room", "arguments": {"project": PROJECT, "limit": 3}}}, headers)
    assert status == 200, called
    res = called["result"]
    assert not res.get("isError"), res
    out_schema = next(t["outputSchema"] for t in listed["result"]["tools"] if t["name"] == "read_room")
    Draft202012Validator(out_schema, format_checker=FormatChecker()).validate(res["structuredContent"])
    assert json.loads(res["content"][0]["text"]) == res["structuredContent"]
