# Shared by the scripts in benches/sql that measure on a database of their own (sourced,
# not run): a temporary folder `work` and the database, both removed when the script
# exits (with the service, once `service_pid` is set); the trading calendar; the quote
# files of a span of weekdays; pgbench's rate of a statement file.
# Expects `bin` (the iq-service binary) to be set. PGURL: the server (default
# postgres://postgres@127.0.0.1:5432).

base=${PGURL:-postgres://postgres@127.0.0.1:5432}
work=$(mktemp -d)
db=""
service_pid=""
# Each step may fail (`|| true`): under `set -e` a failed one would end the script here,
# leaving what the steps after it remove, and give the script its status.
cleanup() {
  [[ -n $service_pid ]] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  [[ -n $db ]] && psql "$base/postgres" -qXc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# NAME: a new, empty database NAME (an earlier run's is dropped first), migrated by the
# service, as DATABASE_URL.
create_database() {
  db=$1
  PGOPTIONS='-c client_min_messages=warning' \
    psql "$base/postgres" -qXc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  export DATABASE_URL="$base/$db"
  "$bin" import /dev/null >/dev/null 2>&1 || true # migrates the empty database
}

# FROM TO: every weekday from FROM to TO (YYYY-MM-DD) an open day of the trading calendar.
open_weekdays() {
  psql "$DATABASE_URL" -qXc "INSERT INTO trade_calendar SELECT d::date FROM generate_series('$1'::date, '$2'::date, '1 day') d WHERE extract(isodow FROM d) < 6"
}

# FROM TO <SCRIPT: runs the Python SCRIPT, which writes quote files, after a prelude that
# sets `out` (the folder `work`), `codes` (the seven indexes that have quotes) and `days`
# (the weekdays from FROM to TO, YYYY-MM-DD, as dates) and seeds `random` with 1.
weekday_quotes() {
  local prelude
  prelude=$(cat <<'PY'
import datetime, random, sys
random.seed(1)
out = sys.argv[1]
codes = ["Server_Index", "Server_Rental_Index", "GPU_Index", "DRAM_Index", "SSD_Index", "CPU_Index", "OI_Index"]
d, end, days = datetime.date.fromisoformat(sys.argv[2]), datetime.date.fromisoformat(sys.argv[3]), []
while d <= end:
    if d.weekday() < 5:
        days.append(d)
    d += datetime.timedelta(days=1)
PY
)
  python3 -c "$prelude"$'\n'"$(cat)" "$work" "$1" "$2"
}

# NAME CLIENTS SECONDS: the transactions per second of pgbench running $work/NAME.sql as
# prepared statements at CLIENTS clients on 2 threads for SECONDS.
pgbench_tps() {
  pgbench "$DATABASE_URL" -n -M prepared -c "$2" -j 2 -T "$3" -f "$work/$1.sql" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

# NAME...: each $work/NAME.sql for 5 s at 2 clients, two rounds alternating, printed in
# transactions per second.
two_rounds() {
  local round name
  for round in 1 2; do
    for name in "$@"; do
      echo "round $round  $name  $(pgbench_tps "$name" 2 5) tps"
    done
  done
}
