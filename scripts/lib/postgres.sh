# Sourced by scripts/with-postgres and scripts/cluster: a throwaway PostgreSQL server on loopback.
#   pg_up DIR   installs PostgreSQL from Debian's packages when missing (as root), starts a server
#               whose files live in DIR on a free port, creates the database tollgate_test, and
#               sets PG_URL (its URL) and PG_CTL (a script: `kill` sends SIGKILL to the server and
#               its backends, `start` starts it again)
#   pg_down     stops the server (immediately) and removes DIR

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

pg_up() {
  PG_DIR=$1
  PG_BIN=$(pg_bin)
  if [ -z "$PG_BIN" ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
      PG_BIN=$(pg_bin)
    fi
    [ -n "$PG_BIN" ] || { echo "PostgreSQL is required (run as root to install it)" >&2; return 1; }
  fi
  PG_AS=()
  if [ "$(id -u)" = 0 ]; then
    # The server refuses to run as root.
    chown postgres "$PG_DIR"
    PG_AS=(runuser -u postgres --)
  fi
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U tollgate --no-sync >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  local options="-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o "$options" start >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; return 1; }
  "${PG_AS[@]}" "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U tollgate tollgate_test
  cat >"$PG_DIR/ctl" <<CTL
#!/usr/bin/env bash
set -euo pipefail
case "\$1" in
  kill)
    # pg_ctl starts the server in a session of its own: its process group holds the server
    # and every process it starts, so one signal reaches them all at once.
    pid=\$(head -n 1 "$PG_DIR/data/postmaster.pid")
    kill -KILL -- "-\$pid"
    while pgrep -g "\$pid" >/dev/null; do sleep 0.05; done
    ;;
  start)
    ${PG_AS[*]} "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o "$options" start >/dev/null
    ;;
  *) echo "usage: \$0 kill|start" >&2; exit 2 ;;
esac
CTL
  chmod +x "$PG_DIR/ctl"
  PG_CTL="$PG_DIR/ctl"
  PG_URL="postgres://tollgate@127.0.0.1:$port/tollgate_test"
}

pg_down() {
  [ -n "${PG_DIR:-}" ] || return 0
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=""
}
