#!/usr/bin/env python3
"""Durable tasks per second: create → complete → `tasks/get` cycles through a Tollgate endpoint
with the in-memory, SQLite and PostgreSQL task stores, each beside the store's own limit measured
in the same run.

For each store, benches/http `tasks-bench` (feature `tasks`) runs:
- `tollgate`: C loops through an in-process endpoint (McpService, no socket), each cycle a
  `tools/call` creating a task whose work completes at once, `tasks/get` until it reads
  `completed`, and one more `tasks/get`. It reports how many polls a cycle took (P) and how many
  store calls of each kind it made per cycle, among them L loads (a poll that overtakes the work
  reads the row; a `tasks/get` of a task the instance saw end reads none, so L < P + 1).
- `bare` (SQLite, PostgreSQL): the same SQL statements a cycle costs the store, straight through
  sqlx (SQLite through a pool of the store's size, PostgreSQL on one unchecked connection per
  loop, as the store keeps its own): INSERT, UPDATE (the worker's compare-and-swap to
  `completed`, from the version it inserted), L SELECTs (the Tollgate run's loads per cycle).
  The store's limit.
- `pgbench` (PostgreSQL): the same statements as one pgbench transaction (`-f`, prepared
  statements, record texts passed as variables), `-c C -j 1 -T S -n`, against the same database,
  after a one-second warm-up like the other two runs'.
The in-memory store has no limit apart from Tollgate's (n/a). Every run starts from an empty
table. Unpinned: the bench, the database and pgbench share this machine's cores, so the figures
are this machine's; the ratios are what the goals read (issue 50: SQLite ≥ 1.0× the bare sqlx
loop, PostgreSQL ≥ 0.75× pgbench).

Environment: DURATION seconds per run (default 5), CONCURRENCY loops / pgbench clients (default
8), TASKS_PG_URL (else TOLLGATE_TEST_POSTGRES_URL, as scripts/with-postgres sets it; neither:
PostgreSQL is skipped), BENCH_JSON a path to write the rows to as JSON, TASKS_BENCH_BIN the
binary (default: built with cargo in benches/http), REPEAT rounds (default 1; medians reported).
Nothing here runs in scripts/test.
  scripts/with-postgres python3 scripts/bench_tasks.py
"""
import json, math, os, re, resource, shutil, statistics, subprocess, sys, tempfile, urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "benches", "http")
DURATION = int(os.environ.get("DURATION", "5"))
# Rounds of every run, interleaved; the table gives medians (each ratio the median of the rounds'
# ratios, each from runs made one after the other), so a noisy machine's swings show less.
REPEAT = max(1, int(os.environ.get("REPEAT", "1")))
CONCURRENCY = int(os.environ.get("CONCURRENCY", "8"))
WARMUP = 1
PG_URL = os.environ.get("TASKS_PG_URL") or os.environ.get("TOLLGATE_TEST_POSTGRES_URL")
# Issue 50's goals: each store's figure against its limit (the limit's name, the figure, the least).
GOALS = {"sqlite": ("the bare sqlx loop", "tollgate_over_bare", 1.0),
         "postgres": ("pgbench", "tollgate_over_pgbench", 0.75)}
# Every subprocess is bounded: its run, the warm-up, and room for connecting and stopping.
BOUND = DURATION + WARMUP + 60

# The statement texts of crates/tollgate/src/tasks/sql.rs (PostgreSQL), with pgbench variables.
INSERT = ("INSERT INTO tollgate_tasks (id, version, expires_at_ms, data) "
          "SELECT :id, :v1, :expires, :working WHERE (SELECT n FROM tollgate_task_count WHERE one = 1) < :capacity;")
LOAD = "SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = :id;"
REPLACE = ("UPDATE tollgate_tasks SET version = :v2, expires_at_ms = :expires, data = :completed "
           "WHERE id = :id AND version = :v1;")
# Record texts of the shape and size tasks-bench and Tollgate write (see tasks_bench.rs).
NOW = 1_790_000_000_000
WORKING = ('{"v":1,"owner":"/mcp\\na\\n","tool":"job","typed":false,"status":"working",'
           f'"created":{NOW},"updated":{NOW},"ttl":3600000,"poll":1000,"lease":{NOW + 10_000},'
           '"requests":{},"asked":[],"responses":{}}')
COMPLETED = ('{"v":1,"owner":"/mcp\\na\\n","tool":"job","typed":false,"status":"completed",'
             f'"created":{NOW},"updated":{NOW + 1},"ttl":3600000,"poll":1000,"lease":{NOW + 10_000},'
             '"requests":{},"asked":[],"responses":{},'
             '"result":"{\\"resultType\\":\\"complete\\",\\"content\\":[{\\"type\\":\\"text\\",\\"text\\":\\"5\\"}]}"}')


def binary():
    path = os.environ.get("TASKS_BENCH_BIN")
    if path:
        return path
    subprocess.run(["cargo", "build", "--release", "--features", "tasks", "--bin", "tasks-bench"],
                   cwd=BENCH_DIR, check=True, timeout=3600)
    return os.path.join(BENCH_DIR, "target", "release", "tasks-bench")


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tasks_bench(bin_path, mode, store, loads=None):
    args = [bin_path, mode, store, "--seconds", str(DURATION), "--concurrency", str(CONCURRENCY),
            "--warmup", str(WARMUP)]
    if loads is not None:
        args += ["--loads", f"{loads:.3f}"]
    cpu = child_cpu()
    out = subprocess.run(args, capture_output=True, text=True, timeout=BOUND)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{out.stderr}{out.stdout}")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    # The bench process's CPU (client and Tollgate or sqlx; not the database server's).
    figures["process_cpu_s"] = round(child_cpu() - cpu, 2)
    return figures


def pgbench_script(loads):
    """One cycle as one pgbench transaction: L loads, a fractional one drawn at random."""
    whole = int(math.floor(loads))
    fraction = loads - whole
    lines = [
        r"\set id random(1000000000000000000, 9223372036854775806)",
        r"\set draw random(0, 999999)",
        INSERT, REPLACE,
    ]
    lines += [LOAD] * whole
    if fraction > 0.0005:
        lines += [rf"\if :draw < {round(fraction * 1_000_000)}", LOAD, r"\endif"]
    return "\n".join(lines) + "\n"


def pgbench(bin_path, url, loads, workdir):
    """pgbench's transactions per second for the cycle's statements (None without pgbench)."""
    pgbench_bin = shutil.which("pgbench")
    if pgbench_bin is None:
        print("pgbench not found: its column is left empty", file=sys.stderr)
        return None
    u = urllib.parse.urlparse(url)
    env = dict(os.environ)
    if u.password:
        env["PGPASSWORD"] = urllib.parse.unquote(u.password)
    conn = ["-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432)]
    if u.username:
        conn += ["-U", urllib.parse.unquote(u.username)]
    script = os.path.join(workdir, "cycle.sql")
    with open(script, "w") as f:
        f.write(pgbench_script(loads))
    variables = ["-D", "v1=1", "-D", "v2=2", "-D", f"expires={NOW + 3_600_000}",
                 "-D", "capacity=1000000", "-D", f"working={WORKING}", "-D", f"completed={COMPLETED}"]
    db = u.path.lstrip("/") or "postgres"
    # The table as the store creates it, emptied; then a warm-up, then the measured run.
    subprocess.run([bin_path, "prepare", url], check=True, timeout=BOUND)
    base = [pgbench_bin, "-n", "-M", "prepared", "-f", script, "-c", str(CONCURRENCY), "-j", "1"] + variables + conn
    subprocess.run(base + ["-T", str(WARMUP), db], capture_output=True, env=env, check=True, timeout=BOUND)
    out = subprocess.run(base + ["-T", str(DURATION), db], capture_output=True, text=True, env=env, timeout=BOUND)
    if out.returncode != 0:
        raise SystemExit(f"pgbench failed:\n{out.stderr}{out.stdout}")
    found = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out.stdout)
    if not found:
        raise SystemExit(f"no tps in pgbench's output:\n{out.stdout}")
    return float(found.group(1))


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def round_once(bin_path, workdir, n):
    """One round: every store's runs, one after the other."""
    rows = []
    memory = tasks_bench(bin_path, "tollgate", "memory")
    rows.append({"store": "memory", "tollgate": memory, "bare": None, "pgbench_tps": None})

    sqlite = tasks_bench(bin_path, "tollgate", "sqlite:" + os.path.join(workdir, f"tollgate-{n}.sqlite3"))
    sqlite_bare = tasks_bench(bin_path, "bare", "sqlite:" + os.path.join(workdir, f"bare-{n}.sqlite3"),
                              loads=sqlite["statements_per_cycle"]["load"])
    rows.append({"store": "sqlite", "tollgate": sqlite, "bare": sqlite_bare, "pgbench_tps": None})

    if PG_URL:
        pg = tasks_bench(bin_path, "tollgate", PG_URL)
        loads = pg["statements_per_cycle"]["load"]
        pg_bare = tasks_bench(bin_path, "bare", PG_URL, loads=loads)
        tps = pgbench(bin_path, PG_URL, loads, workdir)
        rows.append({"store": "postgres", "tollgate": pg, "bare": pg_bare, "pgbench_tps": tps})
    return rows


def main():
    bin_path = binary()
    if not PG_URL:
        print("TASKS_PG_URL (or TOLLGATE_TEST_POSTGRES_URL) unset: PostgreSQL skipped "
              "(scripts/with-postgres python3 scripts/bench_tasks.py runs it)", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tollgate-tasks-bench.") as workdir:
        rounds = [round_once(bin_path, workdir, n) for n in range(REPEAT)]

    figures = []
    for i, first in enumerate(rounds[0]):
        runs = [r[i] for r in rounds]
        t = [r["tollgate"]["cycles_per_s"] for r in runs]
        b = [r["bare"]["cycles_per_s"] if r["bare"] else None for r in runs]
        p = [r["pgbench_tps"] for r in runs]
        figures.append({
            "store": first["store"],
            "tollgate_cycles_per_s": median(t),
            "bare_cycles_per_s": median(b),
            "tollgate_over_bare": median([ratio(x, y) for x, y in zip(t, b)]),
            "pgbench_tps": median(p),
            "tollgate_over_pgbench": median([ratio(x, y) for x, y in zip(t, p)]),
            "polls_per_cycle": median([r["tollgate"]["polls_per_cycle"] for r in runs]),
            "tollgate_statements_per_cycle": first["tollgate"]["statements_per_cycle"],
            "bare_statements_per_cycle": first["bare"]["statements_per_cycle"] if first["bare"] else None,
            "tollgate_cpu_s_per_1000_cycles": median([
                1000 * r["tollgate"]["process_cpu_s"] / max(1, r["tollgate"]["cycles"]) for r in runs]),
            "bare_cpu_s_per_1000_cycles": median([
                1000 * r["bare"]["process_cpu_s"] / max(1, r["bare"]["cycles"]) if r["bare"] else None for r in runs]),
            "rounds": [{"tollgate": r["tollgate"], "bare": r["bare"], "pgbench_tps": r["pgbench_tps"]} for r in runs],
            "duration_s": DURATION,
            "concurrency": CONCURRENCY,
            "repeat": REPEAT,
        })

    def cell(value, fmt="{:,.0f}"):
        return "n/a" if value is None else fmt.format(value)

    print(f"Durable task cycles (create → complete → tasks/get), {DURATION} s per run, "
          f"concurrency {CONCURRENCY}, {os.cpu_count()} cores shared by the bench and the database"
          + (f", median of {REPEAT} interleaved rounds" if REPEAT > 1 else "") + "\n")
    print("| store | Tollgate cycles/s | bare sqlx cycles/s | Tollgate/bare | pgbench tps (statements as a cycle) | Tollgate/pgbench |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in figures:
        print(f"| {f['store']} | {cell(f['tollgate_cycles_per_s'])} | {cell(f['bare_cycles_per_s'])} | "
              f"{cell(f['tollgate_over_bare'], '{:.2f}×')} | {cell(f['pgbench_tps'])} | "
              f"{cell(f['tollgate_over_pgbench'], '{:.2f}×')} |")
    print()
    for f in figures:
        s = f["tollgate_statements_per_cycle"]
        bare_cpu = f["bare_cpu_s_per_1000_cycles"]
        print(f"- {f['store']}: {f['polls_per_cycle']:.3f} polls per cycle; Tollgate's store calls per cycle: "
              f"insert {s['insert']}, load {s['load']}, replace {s['replace']}, purge {s['purge']}; "
              f"bench process CPU s per 1,000 measured cycles (warm-up and setup included): Tollgate {f['tollgate_cpu_s_per_1000_cycles']:.2f}"
              + (f", bare sqlx {bare_cpu:.2f}" if bare_cpu is not None else ""))
    for f in figures:
        goal = GOALS.get(f["store"])
        if goal is None or f[goal[1]] is None:
            continue
        limit, key, least = goal
        met = "met" if f[key] >= least else "NOT met"
        print(f"- {f['store']}: goal (issue 50) ≥ {least:.2f}× {limit}: {met} ({f[key]:.2f}×)")

    target = os.environ.get("BENCH_JSON")
    if target:
        with open(target, "w") as out:
            json.dump(figures, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
