#!/usr/bin/env bash
# Local nats-server (JetStream) and PostgreSQL for tests and the demo, all state in run/<name>/.
#
#   scripts/servers.sh start NAME [--fresh]   start both, write run/NAME/servers.env (SCANTRACK_NATS,
#                                   SCANTRACK_PG); JetStream starts empty, PostgreSQL keeps its data
#                                   unless --fresh
#   scripts/servers.sh stop NAME    stop what `start NAME` started, by PID (PostgreSQL with SIGINT,
#                                   its fast shutdown: SIGTERM would wait for every client to leave)
#   scripts/servers.sh stop-nats NAME / start-nats NAME   (failure tests restart NATS on its port)
#   scripts/servers.sh start-pg NAME / stop-pg NAME       (a PostgreSQL alone; restarts keep data and port;
#                                                          writes run/NAME/pg.dsn)
#   scripts/servers.sh remove-pg NAME       stop it and remove its data directory and run/NAME
#   scripts/servers.sh start-cluster NAME   a three-node JetStream cluster (n1 n2 n3) on loopback; writes
#                                           run/NAME/cluster.urls (the client URLs, comma-separated)
#   scripts/servers.sh stop-node NAME N / start-node NAME N   stop or restart node nN alone (same ports, same store)
#   scripts/servers.sh stop-cluster NAME    stop every node
#
# Both listen on 127.0.0.1 on free ports. PostgreSQL refuses to run as root, so it runs as the
# `postgres` user (runuser). That user may not be able to enter the clone (a home directory is
# often 0700), so its data directory, socket and log live in a private directory outside the clone,
# /tmp/scantrack-pg-NAME.XXXXXX (or under $SCANTRACK_PG_ROOT), whose path is kept in run/NAME/pg/dir;
# run/NAME/pg keeps the port and the PID.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The servers outlive this script: they must not inherit the caller's descriptors (a test
# runner's pipes, or the socket by which Foundation's Process learns that its child exited).
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

command="${1:?usage: servers.sh start|stop|start-nats|stop-nats|start-cluster|stop-cluster NAME}"
name="${2:-test}"
run="$here/run/$name"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_for_port() {  # port, what, pidfile
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    if [ -n "${3:-}" ] && ! kill -0 "$(cat "$3" 2>/dev/null)" 2>/dev/null; then
      echo "servers: $2 died while starting; see its log in $run" >&2; return 1
    fi
    sleep 0.05
  done
  echo "servers: $2 did not open port $1" >&2
  return 1
}

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] || { echo "servers: PostgreSQL is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
  echo "$dir"
}

as_postgres() {
  # From / : the postgres user may not be allowed into the caller's directory (paths are absolute).
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

stop_pid() {  # pidfile, what, [signal]
  local pidfile="$1" pid signal="${3:-TERM}"
  [ -f "$pidfile" ] || return 0
  pid=$(head -n 1 "$pidfile")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -"$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "servers: stopped $2 (pid $pid)"
  fi
  rm -f "$pidfile"
}

# Streams reserve their byte limits (4 GiB for the agents' stream) against the server's store
# limit, 75 % of the free disk by default, which a fuller disk makes too small for the tests'
# streams under many prefixes: a stated limit instead.
store_limits() {  # file
  echo 'jetstream { max_file_store: 1TB }' > "$1"
}

start_nats() {
  mkdir -p "$run/nats"
  local port
  port=$(cat "$run/nats/port" 2>/dev/null || free_port)
  echo "$port" > "$run/nats/port"
  # A restart on the same port can find it not yet released by the server just stopped: the
  # new server exits at once. Tried three times, with its log shown when it gives up.
  local attempt
  local limits="$run/nats/limits.conf"
  store_limits "$limits"
  for attempt in 1 2 3; do
    nats-server -c "$limits" -js -a 127.0.0.1 -p "$port" -sd "$run/nats/store" -P "$run/nats/nats.pid" \
      -l "$run/nats/nats.log" < /dev/null > /dev/null 2>&1 &  # not the caller's stdout: `start | cat` ends
    echo $! > "$run/nats/nats.pid"
    if wait_for_port "$port" nats-server "$run/nats/nats.pid" 2>/dev/null; then
      echo "servers: nats-server on 127.0.0.1:$port (JetStream store $run/nats/store)"
      return 0
    fi
    kill "$(cat "$run/nats/nats.pid")" 2>/dev/null || true
    sleep 0.5
  done
  echo "servers: nats-server did not start on port $port; the end of its log:" >&2
  tail -n 15 "$run/nats/nats.log" >&2 || true
  return 1
}

# The private directory of run NAME's PostgreSQL, made on first use: data/, sock/, postgres.log.
pg_dir() {
  local dir
  dir=$(cat "$run/pg/dir" 2>/dev/null || true)
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    mkdir -p "$run/pg"
    dir=$(mktemp -d "${SCANTRACK_PG_ROOT:-/tmp}/scantrack-pg-$name.XXXXXX")
    echo "$dir" > "$run/pg/dir"
  fi
  mkdir -p "$dir/sock"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$dir"; fi
  chmod 700 "$dir"
  echo "$dir"
}

# Removes run NAME's PostgreSQL data (--fresh), the private directory included.
remove_pg() {
  local dir
  dir=$(cat "$run/pg/dir" 2>/dev/null || true)
  case "$dir" in */scantrack-pg-"$name".*) rm -rf "$dir" ;; esac
  rm -rf "$run/pg"
}

pg_start_server() {  # bin, dir, port
  as_postgres "$1/pg_ctl" -D "$2/data" -l "$2/postgres.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $3 -k $2/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null \
    || { tail -n 20 "$2/postgres.log" >&2; exit 1; }
  head -n 1 "$2/data/postmaster.pid" > "$run/pg/postgres.pid"
}

# TLS for a data directory (once): a CA of its own and a server certificate for 127.0.0.1 and
# localhost (what sslmode=verify-full checks), ssl = on, and pg_hba lines before initdb's trust
# lines: members of scantrack_tls_login log in with a SCRAM password over TLS only. The CA is
# copied to run/NAME/pg/ca.pem (SCANTRACK_PG_CA) for the clients.
pg_tls() {  # dir
  local dir="$1" tls="$1/tls"
  if [ ! -f "$tls/server.pem" ]; then
    mkdir -p "$tls"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$tls/san.ext"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 3650 \
      -subj "/CN=ScanTrack local PostgreSQL CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$tls/server.key" -out "$tls/server.csr" -subj "/CN=localhost" 2>/dev/null
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
      -out "$tls/server.pem" -days 3650 -extfile "$tls/san.ext" 2>/dev/null
    chmod 600 "$tls/server.key" "$tls/ca.key"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$tls"; fi
  fi
  if ! grep -q "^ssl = on" "$dir/data/postgresql.conf"; then
    printf "ssl = on\nssl_cert_file = '%s'\nssl_key_file = '%s'\n" "$tls/server.pem" "$tls/server.key" \
      >> "$dir/data/postgresql.conf"
  fi
  if ! grep -q "scantrack_tls_login" "$dir/data/pg_hba.conf"; then
    { printf 'hostssl all +scantrack_tls_login 127.0.0.1/32 scram-sha-256\n'
      printf 'host all +scantrack_tls_login 127.0.0.1/32 reject\n'
      cat "$dir/data/pg_hba.conf"; } > "$dir/data/pg_hba.conf.new"
    mv "$dir/data/pg_hba.conf.new" "$dir/data/pg_hba.conf"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir/data/pg_hba.conf"; fi
  fi
  cp "$tls/ca.pem" "$run/pg/ca.pem"
}

start_pg() {
  local bin port dir
  bin=$(pg_bin)
  dir=$(pg_dir)
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$run/pg/initdb.log" 2>&1 \
      || { cat "$run/pg/initdb.log" >&2; exit 1; }
  fi
  pg_tls "$dir"
  port=$(free_port)
  echo "$port" > "$run/pg/port"
  pg_start_server "$bin" "$dir" "$port"
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atq \
    -c "SELECT 1 FROM pg_database WHERE datname='scantrack'" | grep -q 1 \
    || as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres scantrack
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atq \
    -c "SELECT 1 FROM pg_roles WHERE rolname='scantrack_tls_login'" | grep -q 1 \
    || as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -q \
      -c "CREATE ROLE scantrack_tls_login NOLOGIN" >/dev/null
  echo "servers: PostgreSQL on 127.0.0.1:$port (data $dir/data; TLS, CA $run/pg/ca.pem)"
}

restart_pg() {  # same data and port as before
  local bin port
  bin=$(pg_bin)
  port=$(cat "$run/pg/port")
  pg_start_server "$bin" "$(pg_dir)" "$port"
  echo "servers: PostgreSQL restarted on 127.0.0.1:$port"
}

# Node N of a three-node cluster: client and route ports chosen once and kept across restarts.
start_node() {  # N
  local n="$1" dir="$run/cluster/n$1" routes="" i
  mkdir -p "$dir"
  [ -f "$dir/port" ] || free_port > "$dir/port"
  [ -f "$dir/route" ] || free_port > "$dir/route"
  for i in 1 2 3; do
    [ "$i" = "$n" ] && continue
    mkdir -p "$run/cluster/n$i"
    [ -f "$run/cluster/n$i/route" ] || free_port > "$run/cluster/n$i/route"
    routes="${routes:+$routes,}nats://127.0.0.1:$(cat "$run/cluster/n$i/route")"
  done
  store_limits "$dir/limits.conf"
  nats-server -c "$dir/limits.conf" -js -a 127.0.0.1 -p "$(cat "$dir/port")" -sd "$dir/store" -P "$dir/nats.pid" \
    -l "$dir/nats.log" --server_name "n$n" --cluster_name "$name" --cluster "nats://127.0.0.1:$(cat "$dir/route")" --routes "$routes" \
    < /dev/null > /dev/null 2>&1 &
  echo $! > "$dir/nats.pid"
  wait_for_port "$(cat "$dir/port")" "nats-server n$n" "$dir/nats.pid"
  echo "servers: nats-server n$n on 127.0.0.1:$(cat "$dir/port") (routes on $(cat "$dir/route"))"
}

write_env() {
  cat > "$run/servers.env" <<ENV
export SCANTRACK_NATS=nats://127.0.0.1:$(cat "$run/nats/port")
export SCANTRACK_PG="host=127.0.0.1 port=$(cat "$run/pg/port") user=postgres dbname=scantrack"
export SCANTRACK_PG_CA=$run/pg/ca.pem
ENV
}

case "$command" in
  start)
    "$0" stop "$name" >/dev/null 2>&1 || true
    rm -rf "$run/nats/store" "$run/nats/port"
    # --fresh: a new database as well (tests, the demo and benchmarks start from nothing).
    if [ "${3:-}" = "--fresh" ]; then remove_pg; fi
    mkdir -p "$run"
    start_nats
    start_pg
    write_env
    ;;
  stop)
    stop_pid "$run/nats/nats.pid" nats-server
    stop_pid "$run/pg/postgres.pid" PostgreSQL INT
    ;;
  start-nats) start_nats ;;
  stop-nats) stop_pid "$run/nats/nats.pid" nats-server ;;
  start-pg)  # a PostgreSQL of its own (restart tests); keeps its port across restarts
    mkdir -p "$run"
    if [ -f "$run/pg/port" ] && [ -f "$(pg_dir)/data/PG_VERSION" ]; then restart_pg; else start_pg; fi
    echo "host=127.0.0.1 port=$(cat "$run/pg/port") user=postgres dbname=scantrack" > "$run/pg.dsn"
    ;;
  stop-pg) stop_pid "$run/pg/postgres.pid" PostgreSQL INT ;;
  remove-pg)  # stop it and remove its data and run/NAME (a test's PostgreSQL of its own, done with)
    stop_pid "$run/pg/postgres.pid" PostgreSQL INT
    remove_pg
    rm -rf "$run"
    ;;
  start-cluster)
    for n in 1 2 3; do stop_pid "$run/cluster/n$n/nats.pid" "nats-server n$n"; done
    rm -rf "$run/cluster"
    for n in 1 2 3; do start_node "$n"; done
    urls=""
    for n in 1 2 3; do urls="${urls:+$urls,}nats://127.0.0.1:$(cat "$run/cluster/n$n/port")"; done
    echo "$urls" > "$run/cluster.urls"
    ;;
  start-node) start_node "${3:?node number}" ;;
  stop-node) stop_pid "$run/cluster/n${3:?node number}/nats.pid" "nats-server n$3" ;;
  stop-cluster) for n in 1 2 3; do stop_pid "$run/cluster/n$n/nats.pid" "nats-server n$n"; done ;;
  *) echo "usage: servers.sh start|stop|start-nats|stop-nats|start-pg|stop-pg|remove-pg|start-cluster|stop-cluster NAME, start-node|stop-node NAME N" >&2; exit 2 ;;
esac
