# Sourced by .ci/run (and usable by hand: `source .ci/postgres.sh && pg_start`): a throwaway
# PostgreSQL server for the tests of the PostgreSQL state backend, on loopback only, in a
# temporary directory, run by an unprivileged user (initdb and postgres refuse to run as root).
# pg_start exports SKYPLAN_TEST_PG_URL and PGPASSWORD; pg_stop stops the server and removes
# the directory.

PG_TEST_USER="${PG_TEST_USER:-nobody}"
PG_TEST_PASSWORD="skyplan-ci-$$-$RANDOM"

pg_bin() {
  # Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<version>/bin.
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  else
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
  fi
}

pg_install_if_missing() {
  if [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ]; then
    return
  fi
  echo "initdb is missing: installing the postgresql Debian package"
  apt-get update -qq || sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
    DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq postgresql >/dev/null
}

# Runs a command as the unprivileged user when we are root, else as ourselves.
pg_as_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_TEST_USER" -- "$@"
  else
    "$@"
  fi
}

pg_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
  pg_install_if_missing
  local bin
  bin="$(pg_bin)"
  PG_TEST_DIR="$(mktemp -d /tmp/skyplan-pg.XXXXXX)"
  chmod 755 "$PG_TEST_DIR"
  [ "$(id -u)" = 0 ] && chown "$PG_TEST_USER" "$PG_TEST_DIR"
  printf '%s\n' "$PG_TEST_PASSWORD" >"$PG_TEST_DIR/pwfile"
  [ "$(id -u)" = 0 ] && chown "$PG_TEST_USER" "$PG_TEST_DIR/pwfile"
  pg_as_user "$bin/initdb" --pgdata="$PG_TEST_DIR/data" --username=skyplan \
    --pwfile="$PG_TEST_DIR/pwfile" --auth=scram-sha-256 --encoding=UTF8 --no-locale \
    >"$PG_TEST_DIR/initdb.log" 2>&1 || { cat "$PG_TEST_DIR/initdb.log" >&2; return 1; }
  rm -f "$PG_TEST_DIR/pwfile"
  PG_TEST_PORT="$(pg_free_port)"
  pg_as_user "$bin/pg_ctl" --pgdata="$PG_TEST_DIR/data" --log="$PG_TEST_DIR/server.log" \
    --wait --options="-c listen_addresses=127.0.0.1 -p $PG_TEST_PORT -k $PG_TEST_DIR -c max_connections=200 -c fsync=off" \
    start >/dev/null || { cat "$PG_TEST_DIR/server.log" >&2; return 1; }
  PG_TEST_BIN="$bin"
  export SKYPLAN_TEST_PG_URL="postgres://skyplan@127.0.0.1:$PG_TEST_PORT/postgres"
  export PGPASSWORD="$PG_TEST_PASSWORD"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_TEST_PORT ($PG_TEST_DIR)"
}

pg_stop() {
  if [ -n "${PG_TEST_DIR:-}" ] && [ -d "$PG_TEST_DIR/data" ]; then
    pg_as_user "$PG_TEST_BIN/pg_ctl" --pgdata="$PG_TEST_DIR/data" --mode=immediate stop >/dev/null 2>&1 || true
    rm -rf "$PG_TEST_DIR"
  fi
}
