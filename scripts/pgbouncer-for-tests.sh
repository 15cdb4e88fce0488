#!/usr/bin/env bash
# Starts Debian's PgBouncer in transaction mode in front of a PostgreSQL server, for tests and
# benchmarks: `eval "$(scripts/pgbouncer-for-tests.sh start)"` prints the variables to export
# (PGBOUNCER_PORT, PGBOUNCER_DIR, PGBOUNCER_PID); `scripts/pgbouncer-for-tests.sh stop DIR` stops it.
#
# Its server pool (2 connections per database and user) is smaller than one instance's client
# pool (10 + 4), so anything that relies on a session (named prepared statements, session SET,
# LISTEN, session advisory locks) breaks visibly instead of passing by luck.
# Every database name is forwarded (`* = …`), so tests that create a database per test work.
# PgBouncer refuses to run as root; it then runs as the `postgres` user.
#
# Environment: PGBOUNCER_UPSTREAM_HOST (127.0.0.1), PGBOUNCER_UPSTREAM_PORT (5432),
# PGBOUNCER_POOL_SIZE (2), PGBOUNCER_PORT (a free port, chosen here when unset).
set -euo pipefail

command=${1:-start}

if [ "$command" = stop ]; then
  dir=${2:?usage: $0 stop DIR}
  if [ -f "$dir/pgbouncer.pid" ]; then
    pid=$(cat "$dir/pgbouncer.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$dir"
  exit 0
fi

[ "$command" = start ] || { echo "usage: $0 start | stop DIR" >&2; exit 2; }
command -v pgbouncer >/dev/null || { echo "pgbouncer is not installed (apt-get install -y pgbouncer)" >&2; exit 1; }

upstream_host=${PGBOUNCER_UPSTREAM_HOST:-127.0.0.1}
upstream_port=${PGBOUNCER_UPSTREAM_PORT:-5432}
pool_size=${PGBOUNCER_POOL_SIZE:-2}
port=${PGBOUNCER_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')}

dir=$(mktemp -d /tmp/pgbouncer-test.XXXXXX)
cat > "$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$upstream_host port=$upstream_port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool_size
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 2000
max_db_connections = 0
; Clients wait this long for a server connection before PgBouncer refuses them (an outage answers within it).
query_wait_timeout = 10
; A refused server login is retried this soon (the default, 15 s, would keep every client waiting that long after an outage).
server_login_retry = 0.1
server_reset_query =
ignore_startup_parameters = extra_float_digits,options
admin_users = postgres
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
echo '"postgres" ""' > "$dir/userlist.txt"

if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  runuser -u postgres -- pgbouncer -d "$dir/pgbouncer.ini"
else
  pgbouncer -d "$dir/pgbouncer.ini"
fi
for _ in $(seq 1 50); do
  pg_isready -h 127.0.0.1 -p "$port" -q 2>/dev/null && break
  sleep 0.1
done
pg_isready -h 127.0.0.1 -p "$port" -q || { echo "pgbouncer did not start; its log:" >&2; cat "$dir/pgbouncer.log" >&2; exit 1; }

echo "export PGBOUNCER_PORT=$port PGBOUNCER_DIR=$dir PGBOUNCER_PID=$(cat "$dir/pgbouncer.pid")"
