"""A fake model server for the end-to-end suite: Python stdlib only, bound to 127.0.0.1 only.

It speaks just enough of three wire protocols for the real clients to run a conversation:

* Anthropic Messages (`POST /v1/messages`, JSON or SSE, and `count_tokens`): Claude Code;
* OpenAI Responses (`POST /v1/responses`, SSE or JSON, and `/v1/responses/compact`): Codex CLI;
* Gemini (`:generateContent`, `:streamGenerateContent` with or without `alt=sse`,
  `:countTokens`): Gemini CLI;
* OpenAI Chat Completions (`POST /v1/chat/completions`, SSE or JSON): OpenCode through an
  `@ai-sdk/openai-compatible` provider.

Every request is recorded (`FakeModel.requests`, and one JSON line per request in `log_path`
when given). The model's answers are scripted by the test: `FakeModel.plan(tag, steps)` binds
a list of tool calls to a tag; a user message containing `PLAN-<tag>` makes the k-th model turn
after that message call the k-th step, then the model answers `DONE`. Steps:

  ("read", path)          Claude `Read`, Gemini `read_file`, OpenCode `read`
  ("write", path, text)   Claude `Write`, Gemini `write_file` (a new file's whole text)
  ("edit", path, old, new)  Claude `Edit`, Gemini `replace` (one replacement)
  ("patch", patch_text)   Codex `apply_patch`
  ("bash", command)       Claude `Bash`, Codex `exec_command`, Gemini `run_shell_command`,
                          OpenCode `bash`
  ("agent", prompt)       Claude `Agent` (or `Task`), Codex `spawn_agent`, OpenCode `task`
  ("wait",)               Codex `wait_agent` on the agent spawned last

Compaction requests are answered with a summary text, never with a tool call.
`big_usage(tokens, count)` reports `tokens` input tokens on the next `count` model answers
(to provoke a client's auto-compaction).

The server doubles as the clients' HTTP(S) proxy (`proxy_url`): anything a client tries to
reach other than this server arrives as a CONNECT or absolute-URI request, is refused with 403
and is listed in `stray()`. So a run never leaves the machine, and a test can see it tried.

Run `python fakemodel.py --log FILE` to use it by hand.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

LOOPBACK = "127.0.0.1"
DONE = "DONE"
SUMMARY = "Summary of the conversation so far: the user ran scripted checks; nothing is pending."
PLAN_RE = re.compile(r"PLAN-([A-Za-z0-9_]+)")
# How each client phrases a compaction request (Claude's /compact, Codex's local compaction).
COMPACTION_MARKERS = ("CONTEXT CHECKPOINT COMPACTION", "CRITICAL: Respond with TEXT ONLY",
                      "Generate a new <state_snapshot>",
                      "create a detailed summary of the conversation",
                      "Your task is to create a detailed summary")
MODEL_PATHS = ("/messages", "/responses", ":generateContent", ":streamGenerateContent",
               "/chat/completions")


@dataclass
class Request:
    """One recorded HTTP request."""

    n: int
    t: float
    method: str
    path: str
    headers: dict[str, str]
    body: str
    json: Any = None
    answer: str = ""  # what the fake model answered: "text", "tool:<name>", "summary", ...

    @property
    def is_model_call(self) -> bool:
        """A request for a model turn (not a token count, probe or compaction endpoint)."""
        p = self.path.split("?")[0]
        return self.method == "POST" and p.endswith(MODEL_PATHS) and not p.endswith("count_tokens")

    @property
    def is_compaction(self) -> bool:
        return self.answer == "summary" or self.path.split("?")[0].endswith("/responses/compact")

    def strings(self) -> Iterator[str]:
        """Every string value in the JSON body (so escaping never hides a match)."""
        stack = [self.json]
        while stack:
            value = stack.pop()
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)

    def count(self, needle: str) -> int:
        """How many times `needle` occurs in the request's strings."""
        return sum(s.count(needle) for s in self.strings())


@dataclass
class _State:
    plans: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    big_tokens: int = 0
    big_left: int = 0


class FakeModel:
    """The server; `start()` it, point a client at `url`, read `requests`, `stop()` it."""

    def __init__(self, log_path: str | None = None) -> None:
        self.log_path = log_path
        self.requests: list[Request] = []
        self._state = _State()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ----------------------------------------------------------------------
    def start(self) -> "FakeModel":
        handler = type("BoundHandler", (_Handler,), {"model": self})
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fakemodel",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeModel":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    proxy_url = url

    def plan(self, tag: str, steps: list[tuple[str, ...]]) -> str:
        """Bind `steps` to `tag`; returns the `PLAN-<tag>` word to put in a prompt."""
        with self._lock:
            self._state.plans[tag] = list(steps)
        return f"PLAN-{tag}"

    def big_usage(self, tokens: int, count: int = 1) -> None:
        with self._lock:
            self._state.big_tokens, self._state.big_left = tokens, count

    def model_calls(self, since: int = 0) -> list[Request]:
        """Model-turn requests with n > since, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.n > since and r.is_model_call]

    def mark(self) -> int:
        """The number of the last request so far (to select what a later step sent)."""
        with self._lock:
            return self.requests[-1].n if self.requests else 0

    def stray(self) -> list[Request]:
        """Requests that tried to reach anything but this server."""
        with self._lock:
            return [r for r in self.requests if r.method == "CONNECT" or r.path.startswith("http")]

    # --- used by the handler ----------------------------------------------------------
    def _record(self, handler: BaseHTTPRequestHandler, raw: bytes) -> Request:
        text = raw.decode("utf-8", "replace")
        try:
            parsed = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        with self._lock:
            req = Request(len(self.requests) + 1, time.time(), handler.command, handler.path,
                          dict(handler.headers.items()), text, parsed)
            self.requests.append(req)
        return req

    def _flush(self, req: Request) -> None:
        if not self.log_path:
            return
        row = {"n": req.n, "t": req.t, "method": req.method, "path": req.path,
               "headers": req.headers, "answer": req.answer, "body": req.body}
        with self._lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    def _usage(self) -> int:
        with self._lock:
            if self._state.big_left > 0:
                self._state.big_left -= 1
                return self._state.big_tokens
        return 50

    def _step(self, turns: list[tuple[str, int]]) -> tuple[str, ...] | None:
        """The step for this model turn. `turns` is the conversation as (user text, tool calls
        made after it) pairs; the last user message naming a plan decides."""
        with self._lock:
            plans = dict(self._state.plans)
        calls = 0
        for text, made in reversed(turns):
            calls += made
            match = PLAN_RE.search(text)
            if match and match.group(1) in plans:
                steps = plans[match.group(1)]
                return steps[calls] if calls < len(steps) else None
        return None


def _is_compaction(text: str) -> bool:
    return any(marker in text for marker in COMPACTION_MARKERS)


# --------------------------------------------------------------------------- Anthropic
def _anthropic_turns(messages: list[Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "user":
            turns.append((json.dumps(content), 0))
        elif message.get("role") == "assistant" and isinstance(content, list) and turns:
            made = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            turns[-1] = (turns[-1][0], turns[-1][1] + made)
    return turns


def _anthropic_block(model: FakeModel, req: dict[str, Any], raw: str) -> tuple[dict[str, Any], str]:
    messages = req.get("messages") or []
    if _is_compaction(json.dumps(messages[-3:])):  # hook context may follow the instructions
        return {"type": "text", "text": SUMMARY}, "summary"
    tools = {t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)}
    step = model._step(_anthropic_turns(messages))
    if step:
        kind = step[0]
        if kind == "read" and "Read" in tools:
            return _tool("Read", {"file_path": step[1]}), "tool:Read"
        if kind == "write" and "Write" in tools:
            return _tool("Write", {"file_path": step[1], "content": step[2]}), "tool:Write"
        if kind == "edit" and "Edit" in tools:
            return _tool("Edit", {"file_path": step[1], "old_string": step[2],
                                  "new_string": step[3]}), "tool:Edit"
        if kind == "bash" and "Bash" in tools:
            return _tool("Bash", {"command": step[1], "description": "Run a scripted command"}), "tool:Bash"
        if kind == "agent":
            name = "Agent" if "Agent" in tools else "Task" if "Task" in tools else ""
            if name:
                return _tool(name, {"description": "scripted subagent", "prompt": step[1],
                                    "subagent_type": "general-purpose"}), f"tool:{name}"
    return {"type": "text", "text": DONE}, "text"


def _tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": name,
            "input": arguments}


def _anthropic(h: "_Handler", req: dict[str, Any], raw: str) -> str:
    block, answer = _anthropic_block(h.model, req, raw)
    name = req.get("model", "claude-fake")
    mid = "msg_" + uuid.uuid4().hex[:20]
    stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
    usage = {"input_tokens": h.model._usage(), "output_tokens": 5}
    if not req.get("stream"):
        h.send_json({"id": mid, "type": "message", "role": "assistant", "model": name,
                     "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        return answer
    h.start_sse()
    h.sse("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": name, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})
    if block["type"] == "text":
        h.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}})
        h.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": block["text"]}})
    else:
        h.sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
        h.sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
    h.sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    h.sse("message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}})
    h.sse("message_stop", {"type": "message_stop"})
    return answer


# --------------------------------------------------------------------------- OpenAI Responses
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")


def _responses_turns(items: list[Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "user":
            turns.append((json.dumps(item.get("content")), 0))
        elif item.get("type") in CALL_TYPES and turns:
            turns[-1] = (turns[-1][0], turns[-1][1] + 1)
    return turns


def _responses_tools(req: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """{tool name: definition} and {tool name: namespace} of what the client offers."""
    tools: dict[str, dict[str, Any]] = {}
    namespaces: dict[str, str] = {}
    for tool in req.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for sub in tool.get("tools") or []:
                if isinstance(sub, dict) and sub.get("name"):
                    tools[sub["name"]] = sub
                    namespaces[sub["name"]] = tool.get("name", "")
        elif tool.get("name") or tool.get("type"):
            tools[tool.get("name") or tool.get("type")] = tool
    return tools, namespaces


def _responses_item(model: FakeModel, req: dict[str, Any], h: "_Handler") -> tuple[dict[str, Any], str]:
    items = req.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    tail = json.dumps(items[-3:])
    if _is_compaction(tail) or '"request_kind": "compaction"' in h.headers.get("x-codex-turn-metadata", "") \
            or '"request_kind":"compaction"' in h.headers.get("x-codex-turn-metadata", ""):
        return _message(SUMMARY), "summary"
    tools, namespaces = _responses_tools(req)
    step = model._step(_responses_turns(items))
    call_id = "call_" + uuid.uuid4().hex[:16]
    if step:
        kind = step[0]
        if kind == "bash" and "exec_command" in tools:
            return _function("exec_command", {"cmd": step[1]}, call_id), "tool:exec_command"
        if kind == "patch" and "apply_patch" in tools:
            if tools["apply_patch"].get("type") == "custom":
                return ({"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:16],
                         "status": "completed", "call_id": call_id, "name": "apply_patch",
                         "input": step[1]}, "tool:apply_patch")
            return _function("apply_patch", {"input": step[1]}, call_id), "tool:apply_patch"
        if kind == "agent" and "spawn_agent" in tools:
            return (_function("spawn_agent", {"message": step[1]}, call_id,
                              namespaces.get("spawn_agent")), "tool:spawn_agent")
        if kind == "wait" and "wait_agent" in tools:
            ids = re.findall(r'agent_id\\*"\s*:\s*\\*"([0-9A-Za-z-]+)', json.dumps(items))
            return (_function("wait_agent", {"targets": ids[-1:], "timeout_ms": 10000}, call_id,
                              namespaces.get("wait_agent")), "tool:wait_agent")
    return _message(DONE), "text"


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _function(name: str, arguments: dict[str, Any], call_id: str,
              namespace: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "status": "completed",
            "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}
    if namespace:
        item["namespace"] = namespace
    return item


def _responses(h: "_Handler", req: dict[str, Any]) -> str:
    item, answer = _responses_item(h.model, req, h)
    n_in = h.model._usage()
    usage = {"input_tokens": n_in, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": n_in + 5}
    resp = {"id": "resp_" + uuid.uuid4().hex[:20], "object": "response",
            "created_at": int(time.time()), "status": "completed",
            "model": req.get("model", "gpt-fake"), "output": [item], "usage": usage}
    if not req.get("stream"):
        h.send_json(resp)
        return answer
    h.start_sse()
    base = dict(resp, status="in_progress", output=[], usage=None)
    seq = iter(range(1_000))

    def event(kind: str, data: dict[str, Any]) -> None:
        h.sse(kind, dict(data, type=kind, sequence_number=next(seq)))

    event("response.created", {"response": base})
    event("response.in_progress", {"response": base})
    event("response.output_item.added", {"output_index": 0, "item": dict(item, status="in_progress")})
    where = {"item_id": item["id"], "output_index": 0}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"content_index": 0}
        event("response.content_part.added", dict(where, **part, part={
            "type": "output_text", "text": "", "annotations": []}))
        event("response.output_text.delta", dict(where, **part, delta=text))
        event("response.output_text.done", dict(where, **part, text=text))
        event("response.content_part.done", dict(where, **part, part=item["content"][0]))
    elif item["type"] == "custom_tool_call":
        event("response.custom_tool_call_input.delta", dict(where, delta=item["input"]))
        event("response.custom_tool_call_input.done", dict(where, input=item["input"]))
    else:
        event("response.function_call_arguments.delta", dict(where, delta=item["arguments"]))
        event("response.function_call_arguments.done", dict(where, arguments=item["arguments"]))
    event("response.output_item.done", {"output_index": 0, "item": item})
    event("response.completed", {"response": resp})
    return answer


def _responses_compact(h: "_Handler", req: dict[str, Any]) -> str:
    h.send_json({"output": [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": SUMMARY}]}]})
    return "summary"


# --------------------------------------------------------------------------- Gemini
def _gemini_turns(contents: list[Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for content in contents:
        if not isinstance(content, dict):
            continue
        parts = content.get("parts") or []
        if content.get("role") == "user":
            if any(isinstance(p, dict) and "text" in p for p in parts):
                turns.append((json.dumps(parts), 0))
        elif content.get("role") == "model" and turns:
            made = sum(1 for p in parts if isinstance(p, dict) and "functionCall" in p)
            turns[-1] = (turns[-1][0], turns[-1][1] + made)
    return turns


def _gemini_part(model: FakeModel, req: dict[str, Any]) -> tuple[dict[str, Any], str]:
    contents = req.get("contents") or []
    config = req.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        # side requests (next-speaker check, routing) want JSON, never a tool call
        schema = json.dumps(config.get("responseJsonSchema") or config.get("responseSchema") or {})
        if "next_speaker" in schema:
            return {"text": json.dumps({"reasoning": "done", "next_speaker": "user"})}, "json"
        return {"text": "{}"}, "json"
    if contents and _is_compaction(json.dumps(contents[-1:])):
        return {"text": SUMMARY}, "summary"
    declared = {d.get("name") for t in req.get("tools") or [] if isinstance(t, dict)
                for d in (t.get("functionDeclarations") or t.get("function_declarations") or [])}
    step = model._step(_gemini_turns(contents))
    if step:
        kind = step[0]
        if kind == "read" and "read_file" in declared:
            return {"functionCall": {"name": "read_file", "args": {"file_path": step[1]}}}, "tool:read_file"
        if kind == "write" and "write_file" in declared:
            return {"functionCall": {"name": "write_file", "args": {
                "file_path": step[1], "content": step[2]}}}, "tool:write_file"
        if kind == "edit" and "replace" in declared:
            return {"functionCall": {"name": "replace", "args": {
                "file_path": step[1], "old_string": step[2], "new_string": step[3],
                "instruction": "Apply the scripted edit."}}}, "tool:replace"
        if kind == "bash" and "run_shell_command" in declared:
            return {"functionCall": {"name": "run_shell_command", "args": {
                "command": step[1], "description": "Run a scripted command"}}}, "tool:run_shell_command"
    return {"text": DONE}, "text"


def _gemini(h: "_Handler", req: dict[str, Any], stream: bool) -> str:
    part, answer = _gemini_part(h.model, req)
    n_in = h.model._usage()
    resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": n_in, "candidatesTokenCount": 5,
                              "totalTokenCount": n_in + 5},
            "modelVersion": "gemini-fake", "responseId": uuid.uuid4().hex[:16]}
    if stream and "alt=sse" in h.path:
        h.start_sse()
        h.sse(None, resp)
    else:
        h.send_json([resp] if stream else resp)
    return answer


# --------------------------------------------------------------------------- OpenAI Chat Completions
def _chat_turns(messages: list[Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "user":
            turns.append((json.dumps(message.get("content")), 0))
        elif message.get("role") == "assistant" and turns:
            turns[-1] = (turns[-1][0], turns[-1][1] + len(message.get("tool_calls") or []))
    return turns


def _chat_call(model: FakeModel, req: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(tool call or None, answer label) for one chat-completions request."""
    messages = req.get("messages") or []
    if messages and _is_compaction(json.dumps(messages[-2:])):
        return None, "summary"
    tools = {(t.get("function") or {}).get("name") for t in req.get("tools") or []
             if isinstance(t, dict)}
    step = model._step(_chat_turns(messages))
    if not step:
        return None, "text"
    kind = step[0]
    if kind == "read" and "read" in tools:
        arguments: dict[str, Any] = {"filePath": step[1]}
    elif kind == "bash" and "bash" in tools:
        arguments = {"command": step[1], "description": "Run a scripted command"}
    elif kind == "agent" and "task" in tools:
        arguments = {"description": "scripted subagent", "prompt": step[1],
                     "subagent_type": "general"}
    else:
        return None, "text"
    name = {"read": "read", "bash": "bash", "agent": "task"}[kind]
    return ({"id": "call_" + uuid.uuid4().hex[:16], "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}, f"tool:{name}")


def _chat(h: "_Handler", req: dict[str, Any]) -> str:
    call, answer = _chat_call(h.model, req)
    text = SUMMARY if answer == "summary" else DONE
    cid = "chatcmpl-" + uuid.uuid4().hex[:16]
    name = req.get("model", "gpt-fake")
    n_in = h.model._usage()
    usage = {"prompt_tokens": n_in, "completion_tokens": 5, "total_tokens": n_in + 5}
    finish = "tool_calls" if call else "stop"
    if not req.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else text}
        if call:
            message["tool_calls"] = [call]
        h.send_json({"id": cid, "object": "chat.completion", "created": int(time.time()),
                     "model": name, "choices": [{"index": 0, "message": message,
                                                 "finish_reason": finish}], "usage": usage})
        return answer
    h.start_sse()
    base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": name}
    delta: dict[str, Any] = ({"role": "assistant", "tool_calls": [dict(call, index=0)]} if call
                             else {"role": "assistant", "content": text})
    h.sse(None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
    h.sse(None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    h.sse(None, dict(base, choices=[], usage=usage))
    h.wfile.write(b"data: [DONE]\n\n")
    h.wfile.flush()
    return answer


# --------------------------------------------------------------------------- HTTP
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model: FakeModel  # bound by FakeModel.start()

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet
        pass

    def send_json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event: str | None, data: Any) -> None:
        head = f"event: {event}\n" if event else ""
        self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            import gzip

            try:
                data = gzip.decompress(data)
            except OSError:
                pass
        return data

    def _refuse(self) -> None:
        """A client tried to go somewhere else through the proxy: record it and say no."""
        req = self.model._record(self, b"")
        req.answer = "refused"
        self.model._flush(req)
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def do_CONNECT(self) -> None:
        self._refuse()

    def do_HEAD(self) -> None:
        if self.path.startswith("http"):
            return self._refuse()
        req = self.model._record(self, b"")
        self.model._flush(req)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if self.path.startswith("http"):
            return self._refuse()
        req = self.model._record(self, b"")
        self.model._flush(req)
        if self.path.split("?")[0].endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": "gpt-fake", "object": "model"}],
                            "models": []})
        else:
            self.send_json({})

    def do_POST(self) -> None:
        if self.path.startswith("http"):
            return self._refuse()
        req = self.model._record(self, self._body())
        body = req.json if isinstance(req.json, dict) else {}
        p = self.path.split("?")[0]
        try:
            if p.endswith("/messages/count_tokens"):
                self.send_json({"input_tokens": 100})
                req.answer = "count"
            elif p.endswith("/messages"):
                req.answer = _anthropic(self, body, req.body)
            elif p.endswith("/responses/compact"):
                req.answer = _responses_compact(self, body)
            elif p.endswith("/responses"):
                req.answer = _responses(self, body)
            elif p.endswith("/chat/completions"):
                req.answer = _chat(self, body)
            elif ":streamGenerateContent" in p:
                req.answer = _gemini(self, body, True)
            elif ":generateContent" in p:
                req.answer = _gemini(self, body, False)
            elif ":countTokens" in p:
                self.send_json({"totalTokens": 100})
                req.answer = "count"
            else:
                self.send_json({"error": {"message": "fake model: unknown path " + p}}, 404)
                req.answer = "404"
        except (BrokenPipeError, ConnectionResetError):
            req.answer = req.answer or "disconnected"
        self.model._flush(req)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="append one JSON line per request here")
    args = parser.parse_args()
    model = FakeModel(args.log).start()
    print(f"fake model listening on {model.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        model.stop()


if __name__ == "__main__":
    main()
