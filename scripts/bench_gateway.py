#!/usr/bin/env python3
"""The gateway's bench row: a small call through Tollgate's gateway against the upstream called
directly.

The upstream is benches/http's `tollgate-add` (the `add` tool and 199 fillers); the gateway is
`gateway-add` (tollgate-gateway in front of it over Streamable HTTP, every call's arguments
validated before forwarding and its result checked against the output schema after). The same
2026-07-28 `add` call as scripts/bench_http.py's small call is sent by wrk to the upstream
directly, then to the gateway, alternating for ROUNDS rounds of DURATION seconds after a
one-second warm-up. Pinned (default), the servers share core 1 (one worker thread each) and wrk
runs on core 0. Reported: requests/s, p50 and p99, and the CPU time per request of each process
(from /proc/PID/stat) and of both together; medians over the rounds. Prints a Markdown section
(scripts/bench-http with GATEWAY=1 puts it on the performance page).
"""
import os, re, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_http import CLK_TCK, DURATION, PINNED, ROUNDS, SMALL, cpu_ticks, launch, lua, request, wrk_figures  # noqa: E402

BIN = os.environ.get("BENCH_BIN", "benches/http/target/release")
CONNECTIONS = int(os.environ.get("CONNECTIONS", "32"))


def start(binary, port, extra=None):
    env = dict(os.environ, PORT=str(port), WORKERS="1", **(extra or {}))
    return launch(os.path.join(BIN, binary), env, port, binary)


def run(through_gateway, port):
    """One round: the upstream alone, or the gateway in front of it; wrk's figures and CPU."""
    upstream = start("tollgate-add", port)
    procs = [upstream]
    url = f"http://127.0.0.1:{port}/mcp"
    script = None
    try:
        if through_gateway:
            procs.append(start("gateway-add", port + 1, {"UPSTREAM": url}))
            url = f"http://127.0.0.1:{port + 1}/mcp"
        body, headers = request("modern", SMALL)
        script = lua(body, headers)
        wrk = ["wrk", "-t1", f"-c{CONNECTIONS}", "--timeout", "10s", "-s", script, url]
        subprocess.run(wrk[:3] + ["-d1s"] + wrk[3:], capture_output=True, check=True)
        before = [cpu_ticks(p.pid) for p in procs]
        cmd = wrk[:3] + [f"-d{DURATION}s", "--latency"] + wrk[3:]
        if PINNED:
            cmd = ["taskset", "-c", "0"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        ticks = [cpu_ticks(p.pid) - b for p, b in zip(procs, before)]
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if script:
            os.unlink(script)
    requests = max(int(re.search(r"(\d+) requests in", out).group(1)), 1)
    per = [t / CLK_TCK / requests * 1e6 for t in ticks]
    figures = wrk_figures("gateway" if through_gateway else "upstream", out)
    figures["upstream_us"] = per[0]
    figures["gateway_us"] = per[1] if through_gateway else 0.0
    figures["cpu_us"] = sum(per)
    return figures


def main():
    samples = {False: [], True: []}
    port = 18800
    for _ in range(ROUNDS):
        for through in (False, True):
            port += 2
            samples[through].append(run(through, port))
    med = {t: {k: statistics.median(r[k] for r in samples[t]) for k in samples[t][0]} for t in samples}
    mode = ("pinned: both servers on core 1 (one worker thread each), wrk on core 0" if PINNED else "unpinned")
    d, g = med[False], med[True]
    lines = [
        "A small call (the 2026-07-28 `add` call of the table above, 32 connections) sent to",
        "`tollgate-add` directly, and through `gateway-add` (Tollgate's gateway in front of it over",
        "Streamable HTTP: arguments validated before forwarding, the result read back and checked",
        f"against the output schema after). {mode}; {ROUNDS} rounds of {DURATION} s each, medians.",
        "CPU is per request: the gateway's, the upstream's, and both together.", "",
        "| path | req/s | p50 ms | p99 ms | gateway CPU µs/req | upstream CPU µs/req | total CPU µs/req |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| direct | {d['rps']:.0f} | {d['p50']:.3f} | {d['p99']:.3f} | — | {d['upstream_us']:.1f} | {d['cpu_us']:.1f} |",
        f"| through the gateway | {g['rps']:.0f} | {g['p50']:.3f} | {g['p99']:.3f} | {g['gateway_us']:.1f} | "
        f"{g['upstream_us']:.1f} | {g['cpu_us']:.1f} |",
        "",
        f"Through the gateway: {g['rps'] / d['rps']:.2f}x the direct req/s, p99 {g['p99'] / d['p99']:.2f}x, "
        f"total CPU per request {g['cpu_us'] / d['cpu_us']:.2f}x.",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
