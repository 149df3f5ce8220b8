#!/usr/bin/env python3
"""Durable tasks behind the load balancer, with an instance killed under them.

Usage: scripts/cluster-tasks.py URL STATE_DIR (what scripts/cluster prints). Creates three
`catalog.restock` tasks through nginx (2026-07-28 with the tasks extension; round robin puts them
on different instances: nginx's round robin is strict, and nothing else calls meanwhile), kills the
instance named first in STATE_DIR/instances with SIGKILL, and
polls every task through nginx. Passes when every task ends within the bound (work of about 3 s,
plus the lease of a dead worker), completed where its worker lives and failed with the fixed
internal error where it died, never stuck `working`. A request nginx answers with 502 (it was on
its way to the instance as it died) is retried, as a client would.
"""
import json, os, signal, sys, time, urllib.error, urllib.request

URL, STATE = sys.argv[1], sys.argv[2]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
BOUND = 45


def send(method, params, name):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=META)})
    request = urllib.request.Request(URL, data=body.encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                answer = json.loads(response.read())
            break
        except urllib.error.HTTPError as refused:
            # nginx answers 502 (or 504) for a request that was on its way to the instance as
            # it died (a POST is never replayed on another: it may have run); a client retries.
            if refused.code not in (502, 504) or attempt == 4:
                raise
            time.sleep(0.2)
        except urllib.error.URLError:
            if attempt == 4:
                raise
            time.sleep(0.2)
    if "result" not in answer:
        raise SystemExit(f"{method}: {answer}")
    return answer["result"]


tasks = []
for _ in range(3):
    created = send("tools/call", {"name": "catalog.restock", "arguments": {"sku": "MUG-001", "quantity": 1}},
                   "catalog.restock")
    tasks.append(created["taskId"])
victim = open(os.path.join(STATE, "instances")).readline().split()
os.kill(int(victim[0]), signal.SIGKILL)
print(f"cluster tasks: 3 tasks created, instance {victim[1]} killed (SIGKILL)")

ended = {}
deadline = time.monotonic() + BOUND
while len(ended) < len(tasks) and time.monotonic() < deadline:
    for task in tasks:
        if task in ended:
            continue
        got = send("tasks/get", {"taskId": task}, task)
        if got["status"] in ("completed", "failed", "cancelled"):
            ended[task] = got
    time.sleep(0.5)
if len(ended) < len(tasks):
    raise SystemExit(f"cluster tasks: {len(tasks) - len(ended)} task(s) still not ended after {BOUND} s")
completed = [t for t in ended.values() if t["status"] == "completed"]
failed = [t for t in ended.values() if t["status"] == "failed"]
for task in completed:
    text = task["result"]["content"][0]["text"]
    assert text.startswith("Ordered 1 × Stoneware mug"), text
for task in failed:
    error = task.get("error", {})
    assert error.get("code") == -32603 and error.get("message") == "Internal error", task
assert len(completed) + len(failed) == len(tasks), ended
assert completed, "a task on a living instance completes"
print(f"cluster tasks: {len(completed)} completed, {len(failed)} failed cleanly (their worker was killed)")
