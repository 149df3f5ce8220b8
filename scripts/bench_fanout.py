#!/usr/bin/env python3
"""Fan-out: many idle streams on one instance and one resource update delivered to all.

For each kind of stream (2026-07-28 `subscriptions/listen`, 2025-11-25 session GET streams) and
each server (Tollgate's `fanout-server`, benches/http/src/fanout_server.rs, with its raised bounds
in its doc and below; rmcp's `rmcp-fanout` beside it), a fresh server and the `fanout` driver (benches/http/src/fanout.rs) open LISTENERS streams (default
10,000), read the server's resident memory before and after, then announce UPDATES updates (20)
one at a time and time each from the `touch` call's sending to each stream's receipt. Printed as
a markdown section: the median over the updates of the p50, p99 and last delivery, the worst last
delivery, and resident bytes per idle stream; with the goals of issue 50 (last delivery within
100 ms, at most 16 KiB per idle stream). PINNED=1 (default) runs the server on core 1 with one
worker thread and the driver on core 0. Needs the binaries built in BENCH_TARGET
(default benches/http/target) and a descriptor limit above LISTENERS (each side holds one per
stream).
"""
import json, os, statistics, subprocess, sys, time

target = os.environ.get("BENCH_TARGET", "benches/http/target") + "/release"
listeners = int(os.environ.get("LISTENERS", "10000"))
updates = int(os.environ.get("UPDATES", "20"))
pinned = os.environ.get("PINNED", "1") == "1"
port = os.environ.get("PORT", "18480")


servers = {"Tollgate": "fanout-server", "rmcp 3.11": "rmcp-fanout"}


def run(binary, mode):
    env = dict(os.environ, PORT=port, WORKERS="1")
    pin = lambda core: ["taskset", "-c", core] if pinned else []
    server = subprocess.Popen(pin("1") + [f"{target}/{binary}"], env=env)
    try:
        time.sleep(0.5)
        env.update(MODE=mode, LISTENERS=str(listeners), UPDATES=str(updates), SERVER_PID=str(server.pid))
        out = subprocess.run(pin("0") + [f"{target}/fanout"], env=env, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            sys.exit(f"fanout {binary} {mode}: {out.stderr.strip()}")
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.kill()
        server.wait()


names = {"listen": "2026-07-28 `subscriptions/listen` streams", "get": "2025-11-25 session GET streams"}
print(f"{listeners:,} idle streams on one instance, then {updates} resource updates one at a time, "
      "each delivered to every stream (scripts/bench-fanout). Raised for this run only: 40,000 "
      "connections from one peer, 40,000 listen streams and 2025 sessions, and 64 KiB of replay "
      "reserved per 2025 stream instead of 1 MiB (the default 512 MiB in all holds 512 such "
      "streams). Goals (issue 50): the last delivery within 100 ms, at most 16 KiB per idle stream.")
print()
print("| Server | Streams | p50 | p99 | last (median) | last (worst) | per idle stream | time to open all |")
print("|---|---|---|---|---|---|---|---|")
for mode in ("listen", "get"):
    for label, binary in servers.items():
        r = run(binary, mode)
        rows = r["updates_ms"]
        med = lambda i: statistics.median(row[i] for row in rows)
        print(f"| {label} | {names[mode]} | {med(0):.1f} ms | {med(1):.1f} ms | {med(2):.1f} ms | "
              f"{max(row[2] for row in rows):.1f} ms | {r['bytes_per_stream'] / 1024:.1f} KiB | {r['opened_s']:.1f} s |")
print()
print("rmcp's server (benches/http/src/rmcp_fanout.rs) is written as an rmcp application would "
      "write it: its listens follow a broadcast channel, and the 2025 sessions that subscribed are "
      "told one after another from one task. Memory per stream is the server's resident set after "
      "opening them less before, divided by their number: it includes the 2025 session.")
