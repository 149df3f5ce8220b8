#!/usr/bin/env python3
"""A hostile MCP upstream for scripts/gateway-e2e, as a real process over stdio (2025-06-18).

Its catalog: a good tool, a tool outside Tool Schema Profile 1, one with a remote reference
(which the gateway leaves out), one whose result breaks its own output schema, one whose
content breaks the content rules, an oversized answer, a malformed answer, a hang and a crash
(the process exits in the middle of the call). Every tools/call it receives is appended to the
file named by HOSTILE_LOG (one JSON line each), so the script can check that nothing the gateway
refused was forwarded. No third-party modules.
"""

import json
import os
import sys
import threading
import time

TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "patterned", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                                          "properties": {"q": {"type": "string", "pattern": "^x", "minLength": 2}}, "required": ["q"]}},
    {"name": "remote", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}},
    {"name": "liar", "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
    {"name": "broken", "inputSchema": {"type": "object"}},
    {"name": "huge", "inputSchema": {"type": "object"}},
    {"name": "malformed", "inputSchema": {"type": "object"}},
    {"name": "slow", "inputSchema": {"type": "object"}},
    {"name": "crash", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id_, value):
    send({"jsonrpc": "2.0", "id": id_, "result": value})


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def call(id_, params):
    with open(os.environ["HOSTILE_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(params, sort_keys=True) + "\n")
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "echo":
        result(id_, text(arguments.get("text")))
    elif name == "patterned":
        result(id_, text("ok"))
    elif name == "liar":
        result(id_, {"content": [{"type": "text", "text": "n"}], "structuredContent": {"n": "not a number"}})
    elif name == "broken":
        result(id_, {"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]})
    elif name == "huge":
        # Past the gateway's client message limit (16 MiB by default).
        result(id_, text("x" * (17 * 1024 * 1024)))
    elif name == "malformed":
        result(id_, {"content": "not an array"})
    elif name == "slow":
        # Never answered; the process goes on reading (a hang of one call, not of the server).
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    elif name == "crash":
        os._exit(3)
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32602, "message": "Unknown tool"}})


def main():
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        method = request.get("method")
        id_ = request.get("id")
        params = request.get("params") or {}
        if id_ is None:
            continue  # notifications
        if method == "initialize":
            result(id_, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                         "serverInfo": {"name": "hostile", "version": "1"}})
        elif method == "tools/list":
            result(id_, {"tools": TOOLS})
        elif method == "ping":
            result(id_, {})
        elif method == "tools/call":
            call(id_, params)
        else:
            send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
