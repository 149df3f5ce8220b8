#!/usr/bin/env python3
"""Instructions per request (issue 50: "a regression is judged in instructions per call, which
are steady"), as a section of the performance page.

Each figure is scripts/count-atomics's (callgrind: the server warmed with wrk for 2 s, then 4 s
of requests counted and divided by their number; steady under load, unlike time), for the
servers of benches/http built in release:

- the small 2026-07-28 call: `tollgate-add` and the bare echo `hyper-add`;
- the same call on 2025-11-25 without a session and inside one (`tollgate-add`);
- OpenTelemetry unsampled (`tollgate-add` built with `otel`, `TOLLGATE_ADD_OTEL=unsampled`),
  its cost above the build without the feature, less what the OpenTelemetry API and SDK alone
  ask of any instrumentation of a request (`otel-floor`, crates/tollgate/examples/otel_floor.rs
  in its `boxed-attrs` mode, counted at 1,000 and 6,000 iterations): Tollgate's own part, whose
  goal is 500;
- through the gateway (`gateway-add` in front of a `tollgate-add` running natively): the
  gateway's own instructions per call.

Environment: BENCH_BIN (release binaries, default benches/http/target/release), OTEL_BIN (the
`otel` build's directory, default benches/http/target/otel/release; its rows are left out when
its binaries are missing). Prints a Markdown section.
"""
import os, re, subprocess, sys, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.environ.get("BENCH_BIN", os.path.join(ROOT, "benches/http/target/release"))
OTEL_BIN = os.environ.get("OTEL_BIN", os.path.join(ROOT, "benches/http/target/otel/release"))
COUNT = os.path.join(ROOT, "scripts", "count-atomics")
OTEL_GOAL = 500
PORTS = iter(range(18900, 18990))


def count(binary, scenario="modern", env=None):
    """Instructions and atomic read-modify-writes (in the binary) per request."""
    # A port of its own each time: the previous server may still be letting go of its own.
    out = subprocess.run([COUNT, binary, "--scenario", scenario, "--top", "0", "--port", str(next(PORTS))], capture_output=True,
                         text=True, env=dict(os.environ, **(env or {})), check=True).stdout
    ins = re.search(r"([\d,]+) instructions per request", out)
    atomics = re.search(r"([\d.]+) in the binary", out)
    if not ins:
        sys.exit(f"count-atomics gave no count for {binary}: {out}")
    return int(ins.group(1).replace(",", "")), float(atomics.group(1)) if atomics else None


def floor(binary):
    """otel_floor's instructions per iteration (6,000 iterations less 1,000)."""
    counts = []
    for n in (1000, 6000):
        err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary,
                              "boxed-attrs", str(n)], capture_output=True, text=True).stderr
        counts.append(int(re.search(r"Collected : (\d+)", err).group(1)))
    return (counts[1] - counts[0]) // 5000


def through_gateway():
    """The gateway's own instructions per call, with its upstream running natively."""
    port = 18990
    upstream = subprocess.Popen([os.path.join(BIN, "tollgate-add")], env=dict(os.environ, PORT=str(port), WORKERS="1"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}/mcp"]).returncode == 0:
                break
            time.sleep(0.1)
        return count(os.path.join(BIN, "gateway-add"), env={"UPSTREAM": f"http://127.0.0.1:{port}/mcp"})
    finally:
        upstream.kill()
        upstream.wait()


def main():
    rows = []
    echo = count(os.path.join(BIN, "hyper-add"))
    small = count(os.path.join(BIN, "tollgate-add"))
    stateless = count(os.path.join(BIN, "tollgate-add"), "stateless")
    session = count(os.path.join(BIN, "tollgate-add"), "session")
    rows.append(("small 2026-07-28 call, bare echo (hyper-add)", echo, ""))
    rows.append(("small 2026-07-28 call, Tollgate", small, f"{small[0] / echo[0]:.2f}x the echo"))
    rows.append(("2025-11-25 call without a session", stateless, ""))
    rows.append(("2025-11-25 call in a session", session,
                 f"{session[0] / stateless[0]:.2f}x the call without a session"))
    lines = []
    otel = os.path.join(OTEL_BIN, "tollgate-add")
    floor_bin = os.path.join(OTEL_BIN, "otel-floor")
    if os.path.exists(otel) and os.path.exists(floor_bin):
        unsampled = count(otel, env={"TOLLGATE_ADD_OTEL": "unsampled"})
        least = floor(floor_bin)
        own = unsampled[0] - small[0] - least
        rows.append(("small call, OpenTelemetry unsampled", unsampled, f"+{unsampled[0] - small[0]:,} over the call"))
        lines.append(f"OpenTelemetry unsampled: {unsampled[0] - small[0]:,} instructions above the build "
                     f"without the feature, of which the API and SDK alone ask {least:,} (otel-floor): "
                     f"Tollgate's own part {own:,} (goal ≤ {OTEL_GOAL}: {'met' if own <= OTEL_GOAL else 'not met'}).")
    if os.path.exists(os.path.join(BIN, "gateway-add")):
        gateway = through_gateway()
        rows.append(("the same small call through the gateway: the gateway's own work", gateway,
                     f"{gateway[0] / small[0]:.2f}x the upstream's call"))
    out = ["Instructions and atomic read-modify-writes per request, counted by callgrind "
           "(scripts/count-atomics; a regression is judged by these, which are steady).", "",
           "| request | instructions | atomic RMWs (binary) | against |", "| --- | ---: | ---: | --- |"]
    for label, (ins, atomics), against in rows:
        out.append(f"| {label} | {ins:,} | {'—' if atomics is None else f'{atomics:.1f}'} | {against or '—'} |")
    print("\n".join(out + ([""] + lines if lines else [])))


if __name__ == "__main__":
    main()
