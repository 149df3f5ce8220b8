#!/usr/bin/env python3
"""Cluster rows of scripts/bench-http (CLUSTER=1): what the load balancer and the shared session
store cost.

Tollgate's benchmark server (benches/http tollgate-add, built with its `postgres` feature) serves
the small 2026-07-28 `tools/call` and a 2025-11-25 `tools/call` inside a session (initialized
once, then every request carries `Mcp-Session-Id`; JSON responses). Measured under wrk:
- alone, sessions in memory (the single-process baseline);
- behind scripts/cluster with one instance: straight to the instance, then through nginx;
- behind scripts/cluster with three instances: through nginx (round robin, no affinity).
In the cluster, sessions live in PostgreSQL: every session request reads and refreshes its row.
Unpinned: the instances, nginx, PostgreSQL and wrk share this machine's cores, so the figures
are this machine's, reported with their ratio to the baseline.
"""
import json, os, re, signal, socket, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_http import CONNECTIONS, DURATION, MODERN_CALL, call, lua, wrk_figures  # noqa: E402

BIN = os.environ.get("CLUSTER_BIN", "benches/http/target/cluster/release/tollgate-add")
SESSION_CALL = {"MCP-Protocol-Version": "2025-11-25"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def initialize(url):
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Mcp-Session-Id"]


def measure(url, body, headers):
    script = lua(body, headers)
    try:
        subprocess.run(["wrk", "-t1", f"-c{CONNECTIONS}", "-d1s", "-s", script, url], capture_output=True, check=True)
        out = subprocess.run(["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{DURATION}s", "--latency", "-s", script, url],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script)
    return wrk_figures(url, out)


def scenarios(url):
    """Both calls against `url`: the stateless one, and one in a session made there."""
    session = initialize(url)
    return {
        "call 2026-07-28 (60 B args)": measure(url, call({"a": 2, "b": 3}), MODERN_CALL),
        "call 2025-11-25 in a session": measure(url, call({"a": 2, "b": 3}, meta=False),
                                                dict(SESSION_CALL, **{"Mcp-Session-Id": session})),
    }


def alone():
    port = free_port()
    env = dict(os.environ, PORT=str(port), WORKERS="1", TOLLGATE_ADD_SESSIONS="memory")
    proc = subprocess.Popen([BIN], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise SystemExit(f"{BIN} did not start listening")
        return scenarios(f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.kill()
        proc.wait()


def cluster(instances):
    """Runs scripts/cluster; yields (path label, url) for what to measure, then stops it."""
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    proc = subprocess.Popen(["scripts/cluster", "--bench", BIN, "--instances", str(instances)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        url = state = None
        for _ in range(600):
            text = open(log.name).read()
            state = state or (re.search(r"^cluster: state in (\S+)", text, re.M) or [None, None])[1]
            found = re.search(r"^cluster: (http://\S+/mcp) ", text, re.M)
            if found:
                url = found.group(1)
                break
            if proc.poll() is not None:
                break
            time.sleep(0.5)
        if not url:
            raise SystemExit("the cluster did not start:\n" + open(log.name).read())
        results = {}
        if instances == 1:
            direct = open(os.path.join(state, "instances")).read().split()[1]
            results["1 instance, direct (sessions in PostgreSQL)"] = scenarios(f"http://{direct}/mcp")
        results[f"{instances} instance{'s' if instances > 1 else ''} behind nginx"] = scenarios(url)
        return results
    finally:
        # scripts/cluster stops what it started (within ten seconds) when it gets SIGTERM.
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.unlink(log.name)


def main():
    rows = {"1 process, sessions in memory": alone()}
    rows.update(cluster(1))
    rows.update(cluster(3))
    base = rows["1 process, sessions in memory"]
    print(f"# cluster rows, unpinned (instances, nginx, PostgreSQL and wrk share {os.cpu_count()} cores); "
          f"{CONNECTIONS} connections; {DURATION}s each\n")
    print("| scenario | deployment | req/s | p50 ms | p99 ms | throughput / 1 process |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for scenario in base:
        for path, results in rows.items():
            r = results[scenario]
            print(f"| {scenario} | {path} | {r['rps']:.0f} | {r['p50']:.3f} | {r['p99']:.3f} | "
                  f"{r['rps'] / base[scenario]['rps']:.2f} |")


if __name__ == "__main__":
    main()
