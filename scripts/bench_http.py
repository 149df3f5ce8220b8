#!/usr/bin/env python3
"""Side-by-side HTTP benchmark of Tollgate, the Rust peers and a bare hyper + serde_json echo.

Each server is a release binary from benches/http serving the same `add` tool (and 199 filler
tools) on 127.0.0.1:$PORT/mcp. For every scenario the servers run in turn, alternating for
ROUNDS rounds, each under wrk for DURATION seconds after a one-second warm-up. Pinned mode (the
headline) runs the server on core 1 with one worker thread and wrk on core 0. Reported per
server: requests/s, p50 and p99 latency, server CPU per request (from /proc/PID/stat) and peak
RSS (VmHWM); medians over the rounds; then ratios against the echo and the best peer.

Each server is driven in its fastest documented configuration, with the request it needs:
`modern` is a 2026-07-28 call (headers and `_meta`), `stateless` a 2025-11-25 call without a
session, `session` a 2025-11-25 call inside a session made once before the run (initialize,
notifications/initialized, then `Mcp-Session-Id` on every request; all connections share it).
A server that cannot serve a scenario's kind is left out of that scenario and says so.

`--doc PATH` also writes the report as Markdown with one SVG chart per scenario beside it.
"""
import json, os, platform, re, statistics, subprocess, sys, tempfile, time, urllib.request
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_charts  # noqa: E402

BIN = os.environ.get("BENCH_BIN", "benches/http/target/release")
DURATION = int(os.environ.get("DURATION", "5"))
# Five rounds: p99 at 32 connections moved between 0.8x and 2.2x the echo's across three-round
# runs of the same builds; the median of five moves less.
ROUNDS = int(os.environ.get("ROUNDS", "5"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "32"))
MANY = int(os.environ.get("MANY_CONNECTIONS", "1000"))
PINNED = os.environ.get("PINNED", "1") == "1"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
MODERN_CALL = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"}
LEGACY = {"MCP-Protocol-Version": "2025-11-25"}
CLK_TCK = os.sysconf("SC_CLK_TCK")

# label -> binary, environment, and the request kinds it serves, fastest first. The echo parses
# whatever it gets, so it takes each scenario's fastest kind of the Tollgate server. Tollgate keeps
# 2025 sessions (in memory) only for the `session` kind: with sessions on, a 2025 request without
# one is refused, as the revision says.
SERVERS = {
    "tollgate-add": ("tollgate-add", {}, ["modern", "stateless", "session"]),
    "rmcp-add": ("rmcp-add", {}, ["modern", "stateless"]),
    # rmcp's session mode: measured in the session scenario only (its stateless mode is faster).
    "rmcp-add stateful-json": ("rmcp-add", {"RMCP_STATEFUL": "json"}, ["session-only"]),
    "rmcp-add stateful-sse": ("rmcp-add", {"RMCP_STATEFUL": "sse"}, ["session-only"]),
    "towermcp-add": ("towermcp-add", {}, ["modern", "stateless"]),
    "turbomcp-add": ("turbomcp-add", {}, ["session"]),
    "hyper-add": ("hyper-add", {}, ["modern", "stateless", "session"]),
}
for _skipped in filter(None, os.environ.get("SKIP", "").split(",")):
    SERVERS.pop(_skipped, None)
PEERS = ["rmcp-add", "towermcp-add", "turbomcp-add", "rmcp-add stateful-json", "rmcp-add stateful-sse"]
ECHO = "hyper-add"
# Earlier builds of the Tollgate server measured in the same rounds, for a before/after figure:
# COMPARE="before=/path/to/tollgate-add,mid=/other/tollgate-add", reported as "tollgate-add@LABEL".
COMPARE = dict(item.split("=", 1) for item in os.environ.get("COMPARE", "").split(",") if "=" in item)
for _label, _path in COMPARE.items():
    SERVERS[f"tollgate-add@{_label}"] = (_path, {}, ["modern", "stateless", "session"])


def call(arguments, meta=True, method="tools/call"):
    params = {"name": "add", "arguments": arguments} if method == "tools/call" else {}
    if meta:
        params["_meta"] = META
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, separators=(",", ":"))


def request(kind, arguments=None, method="tools/call"):
    """The body and headers of one request of `kind` (the session id is added at run time)."""
    arguments = arguments if arguments is not None else {"a": 2, "b": 3}
    if kind == "modern":
        headers = dict(MODERN_CALL) if method == "tools/call" else {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        return call(arguments, True, method), headers
    return call(arguments, False, method), dict(LEGACY)


SMALL = {"a": 2, "b": 3}
LARGE = {"a": 2, "b": 3, "pad": "x" * 100_000}
# name, the kinds it may use (a server takes the first it serves), arguments, method, connections
SCENARIOS = [
    ("small call (60 B args)", ["modern", "stateless", "session"], SMALL, "tools/call", CONNECTIONS),
    ("call 2025-11-25 stateless", ["stateless"], SMALL, "tools/call", CONNECTIONS),
    ("call 2025-11-25 in a session", ["session"], SMALL, "tools/call", CONNECTIONS),
    ("call with 100 KB args", ["modern", "stateless", "session"], LARGE, "tools/call", CONNECTIONS),
    (f"small call, {MANY} connections", ["modern", "stateless", "session"], SMALL, "tools/call", MANY),
    ("tools/list 200 tools", ["modern", "stateless", "session"], None, "tools/list", CONNECTIONS),
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


def post(url, body, headers):
    headers = dict(headers, **{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    req = urllib.request.Request(url, data=body.encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=10) as response:
        response.read()
        return response.headers


def open_session(url):
    """A 2025-11-25 session: initialize, then notifications/initialized; its id."""
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    session = post(url, body, {})["Mcp-Session-Id"]
    if not session:
        raise SystemExit(f"{url}: initialize gave no Mcp-Session-Id")
    post(url, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
         dict(LEGACY, **{"Mcp-Session-Id": session}))
    return session


def start(server, port, kind):
    binary, extra, _ = SERVERS[server]
    env = dict(os.environ, PORT=str(port), WORKERS="1", **extra)
    if kind == "session" and server.startswith("tollgate-add"):
        env["TOLLGATE_ADD_SESSIONS"] = "memory"
    return launch(binary if os.path.isabs(binary) else os.path.join(BIN, binary), env, port, server)


def launch(binary, env, port, name):
    """Starts `binary` (on core 1 when pinned) and waits until it answers on `port`, whatever
    the HTTP status."""
    cmd = [binary]
    if PINNED:
        cmd = ["taskset", "-c", "1"] + cmd
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", method="GET"), timeout=0.2)
            return proc
        except urllib.error.HTTPError:
            return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"{name} exited with {proc.returncode}")
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{name} did not start")


def run(server, port, kind, arguments, method, connections):
    proc = start(server, port, kind)
    url = f"http://127.0.0.1:{port}/mcp"
    script = None
    try:
        body, headers = request(kind, arguments, method)
        if kind == "session":
            # The echo keeps no sessions: it gets the header, as the others do, unchecked.
            headers["Mcp-Session-Id"] = "0" * 32 if server == ECHO else open_session(url)
        script = lua(body, headers)
        wrk = ["wrk", "-t1", f"-c{connections}", "--timeout", "10s", "-s", script, url]
        subprocess.run(wrk[:3] + ["-d1s"] + wrk[3:], capture_output=True, check=True)
        before = cpu_ticks(proc.pid)
        cmd = wrk[:3] + [f"-d{DURATION}s", "--latency"] + wrk[3:]
        if PINNED:
            cmd = ["taskset", "-c", "0"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        ticks = cpu_ticks(proc.pid) - before
        rss = peak_rss_kib(proc.pid)
    finally:
        proc.kill()
        proc.wait()
        if script:
            os.unlink(script)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return dict(wrk_figures(server, out), cpu_us=ticks / CLK_TCK / max(requests, 1) * 1e6, rss_mib=rss / 1024)


def wrk_figures(what, out):
    """Throughput and latency from wrk's report; any non-2xx answer or socket error stops the run."""
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{what}: {errors.group(1)} non-2xx responses")
    broken = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if broken and any(int(n) for n in broken.groups()[1:]):
        raise SystemExit(f"{what}: socket errors ({broken.group(0)})")
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)),
        "p99": to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)),
    }


def plan(kinds):
    """Which servers take part in a scenario, with the kind of request each is sent."""
    chosen = {}
    for server, (_, _, served) in SERVERS.items():
        if "session-only" in served:
            served = ["session"] if kinds == ["session"] else []
        kind = next((k for k in kinds if k in served), None)
        if server == ECHO:
            kind = next((k for k in kinds if k in SERVERS["tollgate-add"][2]), None)
        if kind:
            chosen[server] = kind
    return chosen


def measure():
    port = 18600
    report = []
    only = os.environ.get("ONLY")
    for name, kinds, arguments, method, connections in SCENARIOS:
        if only and only not in name:
            continue
        servers = plan(kinds)
        samples = {s: [] for s in servers}
        for _ in range(ROUNDS):
            for server, kind in servers.items():
                port += 1
                samples[server].append(run(server, port, kind, arguments, method, connections))
        medians = {s: {k: statistics.median(r[k] for r in samples[s]) for k in samples[s][0]} for s in servers}
        report.append((name, servers, connections, medians))
    return report


def ratios(medians):
    """Tollgate against the echo and the best peer of the scenario (None when absent)."""
    t = medians["tollgate-add"]
    echo = medians.get(ECHO)
    peers = [(s, medians[s]) for s in PEERS if s in medians]
    best = max(peers, key=lambda p: p[1]["rps"]) if peers else None
    return {
        "echo_rps": t["rps"] / echo["rps"] if echo else None,
        "echo_p99": t["p99"] / echo["p99"] if echo else None,
        "echo_cpu": t["cpu_us"] / echo["cpu_us"] if echo else None,
        "best_peer": best[0] if best else None,
        "peer_rps": t["rps"] / best[1]["rps"] if best else None,
    }


def fmt(v, digits=2):
    return "—" if v is None else f"{v:.{digits}f}"


# Issue 50's req/s goals: (scenario, ratio key, least, how the goal reads).
GOALS = [
    ("small call (60 B args)", "echo_rps", 1.0, "small call: Tollgate ≥ 1.0x the echo's req/s"),
    ("small call (60 B args)", "peer_rps", 2.5, "small call: Tollgate ≥ 2.5x the best peer's req/s"),
    ("call with 100 KB args", "peer_rps", 2.0, "100 KB call: Tollgate ≥ 2.0x the best peer's req/s"),
    ("call 2025-11-25 in a session", "echo_rps", 0.95, "2025 call in a session: Tollgate ≥ 0.95x the echo's req/s"),
]


def goals(report):
    """Each req/s goal of issue 50 whose scenario ran: the figure and whether it is met."""
    ran = {name: ratios(m) for name, _, _, m in report}
    rows = [(label, ran[name][key], least) for name, key, least, label in GOALS
            if name in ran and ran[name][key] is not None]
    if not rows:
        return []
    lines = ["", "| goal (issue 50) | this run | met |", "| --- | ---: | --- |"]
    for label, value, least in rows:
        lines.append(f"| {label} | {value:.2f}x | {'yes' if value >= least else 'no'} |")
    return lines


def tables(report):
    mode = "pinned: server on core 1 (one worker thread), wrk on core 0" if PINNED else "unpinned"
    lines = [f"{mode}; {ROUNDS} rounds of {DURATION} s per server and scenario, medians.", "",
             "| scenario | server | request | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MiB |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, servers, _, m in report:
        for s, kind in servers.items():
            r = m[s]
            lines.append(f"| {name} | {s} | {kind} | {r['rps']:.0f} | {r['p50']:.3f} | {r['p99']:.3f} | "
                         f"{r['cpu_us']:.1f} | {r['rss_mib']:.1f} |")
    lines += ["", "| scenario | Tollgate/echo req/s | p99 Tollgate/echo | CPU Tollgate/echo | best peer | Tollgate/best peer |",
              "| --- | ---: | ---: | ---: | --- | ---: |"]
    for name, _, _, m in report:
        q = ratios(m)
        lines.append(f"| {name} | {fmt(q['echo_rps'])} | {fmt(q['echo_p99'])} | {fmt(q['echo_cpu'])} | "
                     f"{q['best_peer'] or '—'} | {fmt(q['peer_rps'])} |")
    lines += goals(report)
    peers = [s for s in PEERS if any(s in m for _, _, _, m in report)]
    lines += ["", "| scenario | " + " | ".join(f"Tollgate/{p}" for p in peers) + " |",
              "| --- |" + " ---: |" * len(peers)]
    for name, _, _, m in report:
        t = m["tollgate-add"]
        lines.append(f"| {name} | " + " | ".join(fmt(t["rps"] / m[p]["rps"] if p in m else None) for p in peers) + " |")
    if COMPARE:
        lines += ["", "| scenario | build | throughput this/earlier | CPU µs/req this/earlier | p99 this/earlier |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for name, _, _, m in report:
            t = m["tollgate-add"]
            for label in COMPARE:
                e = m.get(f"tollgate-add@{label}")
                if e:
                    lines.append(f"| {name} | {label} | {t['rps'] / e['rps']:.3f} | {t['cpu_us'] / e['cpu_us']:.3f} | "
                                 f"{t['p99'] / e['p99']:.3f} |")
    return lines


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("\n")[0].strip()
    return f"{os.cpu_count()} cores ({model}), Linux {platform.release()}, {rustc}, {wrk}"


def write_doc(path, report, extra):
    """The Markdown report with a chart per scenario in `<path minus .md>/`."""
    folder = os.path.splitext(path)[0]
    os.makedirs(folder, exist_ok=True)
    command = os.environ.get("BENCH_COMMAND", "scripts/bench-http")
    out = ["# Performance", "",
           f"Generated by `{command}` on {date.today().isoformat()}; do not edit by hand (the",
           "history of earlier runs, of what moved the figures and of where a small call's work",
           "goes is in [performance-history.md](performance-history.md)).", "",
           f"Machine: {machine()}.", "",
           open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches", "http", "README.md")).read().strip(), "",
           "## HTTP, side by side", ""]
    out += tables(report)
    out.append("")
    for name, servers, _, m in report:
        file = bench_charts.slug(name) + ".svg"
        rows = [(s, m[s]) for s in servers]
        with open(os.path.join(folder, file), "w") as f:
            f.write(bench_charts.chart(name, rows))
        out += [f"![{name}]({os.path.basename(folder)}/{file})", ""]
    for section in extra:
        out += [open(section).read().strip(), ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    doc = sys.argv[sys.argv.index("--doc") + 1] if "--doc" in sys.argv else None
    extra = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--section=")]
    report = measure()
    print("\n".join(tables(report)))
    if doc:
        write_doc(doc, report, extra)
        print(f"\nwrote {doc}")


if __name__ == "__main__":
    main()
