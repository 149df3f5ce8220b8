#!/usr/bin/env python3
"""Side-by-side HTTP benchmark of Tollgate, rmcp and a bare hyper + serde_json server.

Each server is a release binary from benches/http that serves /mcp on 127.0.0.1:$PORT. For every
scenario the three run in turn, alternating A/B/C for ROUNDS rounds, each under wrk for DURATION
seconds. Pinned mode (the headline) runs the server on core 1 with one worker thread and wrk on
core 0. Reported per server: requests/s, p50 and p99 latency, server CPU per request (from
/proc/PID/stat), and peak RSS (VmHWM); medians over the rounds; then Tollgate/rmcp and
Tollgate/hyper ratios. Load stays on loopback and is bounded in time.
"""
import json, os, re, statistics, subprocess, sys, tempfile, time, urllib.request

BIN = os.environ.get("BENCH_BIN", "benches/http/target/release")
DURATION = int(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "32"))
PINNED = os.environ.get("PINNED", "1") == "1"
SERVERS = ["tollgate-add", "rmcp-add", "hyper-add"]
# Earlier builds of the Tollgate server to measure in the same rounds, for a before/after figure:
# COMPARE="before=/path/to/tollgate-add,mid=/other/tollgate-add". Each is reported as
# "tollgate-add@LABEL" with its throughput as a fraction of the current build's.
COMPARE = dict(item.split("=", 1) for item in os.environ.get("COMPARE", "").split(",") if "=" in item)
SERVERS += [f"tollgate-add@{label}" for label in COMPARE]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
MODERN_CALL = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def call(arguments, meta=True):
    params = {"name": "add", "arguments": arguments}
    if meta:
        params["_meta"] = META
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, separators=(",", ":"))


SCENARIOS = [
    ("call 2026-07-28 (60 B args)", call({"a": 2, "b": 3}), MODERN_CALL),
    ("call 2025-11-25 stateless", call({"a": 2, "b": 3}, meta=False), {"MCP-Protocol-Version": "2025-11-25"}),
    ("call 2026-07-28 (100 KB args)", call({"a": 2, "b": 3, "pad": "x" * 100_000}), MODERN_CALL),
    ("tools/list 200 tools", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}),
     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}),
]


def lua(body, headers):
    lines = ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"',
             'wrk.headers["Accept"] = "application/json, text/event-stream"']
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    lines.append("wrk.body = " + json.dumps(body))
    f = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    f.write("\n".join(lines) + "\n")
    f.close()
    return f.name


def cpu_ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def peak_rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def to_ms(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def start(server, port):
    env = dict(os.environ, PORT=str(port), WORKERS="1")
    label = server.split("@", 1)[1] if "@" in server else None
    cmd = [COMPARE[label] if label else os.path.join(BIN, server)]
    if PINNED:
        cmd = ["taskset", "-c", "1"] + cmd
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", method="GET"), timeout=0.2)
            return proc
        except urllib.error.HTTPError:
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{server} did not start")


def run(server, port, script):
    proc = start(server, port)
    try:
        # Warm-up, then the measured run.
        subprocess.run(["wrk", "-t1", f"-c{CONNECTIONS}", "-d1s", "-s", script, f"http://127.0.0.1:{port}/mcp"],
                       capture_output=True, check=True)
        before = cpu_ticks(proc.pid)
        cmd = ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{DURATION}s", "--latency", "-s", script, f"http://127.0.0.1:{port}/mcp"]
        if PINNED:
            cmd = ["taskset", "-c", "0"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        ticks = cpu_ticks(proc.pid) - before
        rss = peak_rss_kib(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return dict(wrk_figures(server, out), cpu_us=ticks / CLK_TCK / max(requests, 1) * 1e6, rss_mib=rss / 1024)


def wrk_figures(what, out):
    """Throughput and latency from wrk's report; any non-2xx answer stops the benchmark."""
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{what}: {errors.group(1)} non-2xx responses")
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)),
        "p99": to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)),
    }


def main():
    port = 18600
    report = []
    only = os.environ.get("ONLY")
    for name, body, headers in SCENARIOS:
        if only and only not in name:
            continue
        script = lua(body, headers)
        samples = {s: [] for s in SERVERS}
        for _ in range(ROUNDS):
            for server in SERVERS:
                port += 1
                samples[server].append(run(server, port, script))
        os.unlink(script)
        medians = {s: {k: statistics.median(r[k] for r in samples[s]) for k in samples[s][0]} for s in SERVERS}
        report.append((name, medians))
    mode = "pinned: server on core 1 (one worker thread), wrk on core 0" if PINNED else "unpinned"
    print(f"# {mode}; {CONNECTIONS} connections; {ROUNDS} rounds of {DURATION}s, medians\n")
    print(f"| scenario | server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MiB |")
    print(f"| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, m in report:
        for s in SERVERS:
            r = m[s]
            print(f"| {name} | {s} | {r['rps']:.0f} | {r['p50']:.3f} | {r['p99']:.3f} | {r['cpu_us']:.1f} | {r['rss_mib']:.1f} |")
    print("\n| scenario | throughput Tollgate/rmcp | throughput Tollgate/hyper | p99 Tollgate/hyper | RSS Tollgate/hyper |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, m in report:
        t, r, h = m["tollgate-add"], m["rmcp-add"], m["hyper-add"]
        print(f"| {name} | {t['rps'] / r['rps']:.2f} | {t['rps'] / h['rps']:.2f} | {t['p99'] / h['p99']:.2f} | {t['rss_mib'] / h['rss_mib']:.2f} |")
    if COMPARE:
        print("\n| scenario | build | throughput this/earlier | CPU µs/req this/earlier | p99 this/earlier |")
        print("| --- | --- | ---: | ---: | ---: |")
        for name, m in report:
            t = m["tollgate-add"]
            for label in COMPARE:
                e = m[f"tollgate-add@{label}"]
                print(f"| {name} | {label} | {t['rps'] / e['rps']:.3f} | {t['cpu_us'] / e['cpu_us']:.3f} | {t['p99'] / e['p99']:.3f} |")


if __name__ == "__main__":
    main()
