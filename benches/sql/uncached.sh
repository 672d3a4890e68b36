#!/usr/bin/env bash
# Uncached queries (issue 14, item 5): what a key-authenticated query that misses every
# cache costs through the service, against the very statement it runs, run directly by
# pgbench at the same concurrency, in the same run.
#
#   benches/sql/uncached.sh     # needs initdb/pg_ctl/pgbench, curl, python3, wrk
#
# It starts a PostgreSQL cluster of its own in a temporary folder (so it can log
# statements with their parameters, log_statement=all, for one query), the service on it with demo data
# and no page cache (PAGE_CACHE_MB=0), and makes a professional member's key. One query
# is sent, `index_daily` of INDEX_CODE over a 30-day window; the statement the service
# ran for it, and its parameters, are read back from the cluster's log. Then logging is
# turned off and, in each of ROUNDS rounds, back to back:
#
#   (a) pgbench -M prepared -c CLIENTS -j THREADS: the statement, each transaction on a
#       window starting a random day (0-299) after START, as a prepared statement;
#   (b) wrk -c CLIENTS -t THREADS against POST /api/v1/query with the key, each request
#       on a random window of the same 300 (the page cache is off and the windows vary,
#       so every request reads the database; the rare identical requests in flight at
#       once share one read, as they would in production).
#
# and prints transactions / requests per second and pgbench / service: the issue's goal
# is at most 1.5. The service's page-cache hits (should be none) and statements per
# request are read from its /metrics.
#
# It must never touch a cluster other than its own; everything it starts is stopped and
# its folder removed on exit.
#
# Settings (environment): IQ_SERVICE (default target/release/iq-service),
# CLIENTS (32), THREADS (2), SECS (10), ROUNDS (3), WORKERS (4), INDEX_CODE (GPU_Index).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$here/../..
bin=${IQ_SERVICE:-$repo/target/release/iq-service}
clients=${CLIENTS:-32}
threads=${THREADS:-2}
secs=${SECS:-10}
rounds=${ROUNDS:-3}
index_code=${INDEX_CODE:-GPU_Index}
[[ -x $bin ]] || { echo "no $bin: cargo build --release first" >&2; exit 1; }
pgbin=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")")
for tool in curl python3 wrk "$pgbin/pgbench"; do
  command -v "$tool" >/dev/null || [[ -x $tool ]] || { echo "missing: $tool" >&2; exit 1; }
done
# shellcheck source=benches/sql/service.sh
source "$here/service.sh"
work=$(mktemp -d)
service_pid=""
as_pg=()
cleanup() {
  [[ -n $service_pid ]] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The cluster: its own port and socket folder, and parameters logged in full when
# statements are logged. PostgreSQL refuses to run as root; as root it runs as the
# `postgres` system user.
if [[ $(id -u) == 0 ]]; then
  chown postgres "$work"
  as_pg=(runuser -u postgres --)
fi
pgport=$(free_port)
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U postgres -A trust >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -o "-p $pgport -k $work \
  -c listen_addresses=127.0.0.1 -c log_line_prefix=@@ -c log_parameter_max_length=-1" \
  start >/dev/null
dburl=postgres://postgres@127.0.0.1:$pgport/bench
"$pgbin/psql" "postgres://postgres@127.0.0.1:$pgport/postgres" -qXc "CREATE DATABASE bench"

port=$(free_port)
mport=$(free_port)
env -i PATH="$PATH" HOME="${HOME:-/tmp}" DATABASE_URL="$dburl" DEMO_DATA=1 PAGE_CACHE_MB=0 \
  KEY_SECRET="$(python3 -c 'import secrets; print(secrets.token_urlsafe(36))')" \
  LISTEN_ADDR="127.0.0.1:$port" METRICS_ADDR="127.0.0.1:$mport" \
  WORKERS="${WORKERS:-4}" WEBSITE_PER_MINUTE=0 LOG_FORMAT=json RUST_LOG=warn \
  "$bin" serve >"$work/service.log" 2>&1 &
service_pid=$!
wait_ready "$service_pid" "$work/service.log"
# A professional member's key, its tier's limits out of reach (the quota still runs).
key=$(pro_key uncached raise)

# The windows: START + 0..299 days, each 30 days long, inside the demo's year of quotes.
start=$(python3 -c 'import datetime; print((datetime.date.today() - datetime.timedelta(days=340)).isoformat())')
read -r first_start first_end < <(python3 -c "import datetime; s = datetime.date.fromisoformat('$start'); print(s.strftime('%Y%m%d'), (s + datetime.timedelta(days=30)).strftime('%Y%m%d'))")
query() { echo "{\"api_name\":\"index_daily\",\"params\":{\"index_code\":\"$index_code\",\"start_date\":\"$1\",\"end_date\":\"$2\"}}"; }
# Statements are logged only around this one query: logging costs the server more than
# the statement itself. (Set with ALTER SYSTEM: a command-line setting would win.)
pg_log() { "$pgbin/psql" "$dburl" -qXc "ALTER SYSTEM SET log_statement = '$1'" -c "SELECT pg_reload_conf()" >/dev/null; }
pg_log all
mark=$(wc -c <"$work/pg.log")
# The reload reaches each of the service's connections only when it next reads a
# message, so the query is sent again until the cluster logs it (the page cache is off:
# every one reads the database). The server may write its line after the answer went out.
for _ in $(seq 20); do
  answer=$(api POST /api/v1/query "$(query "$first_start" "$first_end")" -H "X-API-Key: $key")
  for _ in $(seq 10); do
    tail -c +"$((mark + 1))" "$work/pg.log" | grep -q 'index_daily' && break 2
    sleep 0.05
  done
done
rows=$(jq_ 'd["data"]["returned"]' <<<"$answer")

# The statement and its parameters, from the log: the execution that read index_daily.
# Each date parameter becomes START + :d (a pgbench variable) or the window's end.
python3 - "$work/pg.log" "$mark" "$first_start" "$first_end" "$work/script.sql" <<'PY'
import datetime, re, sys
log, mark, first_start, first_end, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
text = open(log, encoding="utf-8", errors="replace").read()[mark:]
entries = [e.strip() for e in text.split("@@") if e.strip()]
found = None
for i, entry in enumerate(entries):
    m = re.match(r"LOG:\s+execute [^:]*:\s*(.*)", entry, re.S)
    if m and "index_daily" in m.group(1) and i + 1 < len(entries):
        detail = re.match(r"DETAIL:\s+parameters:\s*(.*)", entries[i + 1], re.S)
        if detail:
            found = (m.group(1), detail.group(1))
if not found:
    sys.exit("the index_daily statement was not found in the cluster's log")
sql, params = found
values = dict((int(n), v) for n, v in re.findall(r"\$(\d+) = ('(?:[^']|'')*'|NULL)", params))
def iso(d):
    return f"'{d[:4]}-{d[4:6]}-{d[6:]}'"
start, end = iso(first_start), iso(first_end)
for n in sorted(values, reverse=True):
    v = values[n]
    if v == start:
        v = f"({start}::date + :d::int)"
    elif v == end:
        v = f"({start}::date + :d::int + 30)"
    sql = re.sub(rf"\${n}(?!\d)", lambda _: v, sql)
with open(out, "w") as f:
    f.write("\\set d random(0, 299)\n" + " ".join(sql.split()) + ";\n")
print("statement (as pgbench runs it):\n  " + " ".join(sql.split()))
PY
pg_log none
logged=$(wc -c <"$work/pg.log")
echo "one query: $rows rows; clients $clients, threads $threads, $secs s a run, $rounds rounds"

cat >"$work/wrk.lua" <<LUA
local start = os.time{year=${start:0:4}, month=tonumber("${start:5:2}"), day=tonumber("${start:8:2}"), hour=12}
request = function()
  local d = math.random(0, 299)
  local s = os.date("%Y%m%d", start + d * 86400)
  local e = os.date("%Y%m%d", start + (d + 30) * 86400)
  local body = '{"api_name":"index_daily","params":{"index_code":"$index_code","start_date":"' .. s .. '","end_date":"' .. e .. '"}}'
  return wrk.format("POST", "/api/v1/query", {["Content-Type"]="application/json", ["X-API-Key"]="$key"}, body)
end
response = function(status, headers, body)
  if status ~= 200 or not body:find('"code":0', 1, true) then
    io.stderr:write("unexpected answer: " .. status .. " " .. body:sub(1, 200) .. "\n")
  end
end
LUA
metric() { # PATTERN: the sum of the service's metric samples whose line matches PATTERN
  curl -sS "http://127.0.0.1:$mport/metrics" | awk -v p="$1" '$0 ~ p && !/^#/ {s += $NF} END {print s + 0}'
}
statements() { curl -sS "http://127.0.0.1:$mport/metrics" | grep '^iq_db_query_duration_seconds_count' | sed 's/.*statement="\([^"]*\)".* /\1 /'; }
statements >"$work/statements.before"
hits0=$(metric 'iq_cache_lookups_total[{].*cache="pages".*result="hit"')
reads0=$(metric 'iq_db_query_duration_seconds_count[{].*index_daily')
served=0
# CPU time in clock ticks: of the service process, and of the cluster (the postmaster,
# the backends it has reaped, and those still alive).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pg_ticks() {
  local postmaster total child
  postmaster=$(head -1 "$work/pg/postmaster.pid")
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat")
  for child in $(pgrep -P "$postmaster"); do
    total=$((total + $(ticks "$child" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)
us_per() { python3 -c "print(round(($2) * 1e6 / $hz / max($1, 1), 1))"; } # COUNT TICKS
ratios=()
for round in $(seq "$rounds"); do
  pg0=$(pg_ticks)
  "$pgbin/pgbench" -n -M prepared -c "$clients" -j "$threads" -T "$secs" \
    -f "$work/script.sql" "$dburl" >"$work/pgbench.out" 2>&1 || { cat "$work/pgbench.out"; exit 1; }
  pg1=$(pg_ticks)
  tps=$(awk '/^tps/ {print $3}' "$work/pgbench.out")
  done_tx=$(awk '/actually processed/ {print $NF}' "$work/pgbench.out")
  sv0=$(ticks "$service_pid")
  wrk -t"$threads" -c"$clients" -d"${secs}s" -s "$work/wrk.lua" \
    "http://127.0.0.1:$port/api/v1/query" >"$work/wrk.out" 2>"$work/wrk.err"
  sv1=$(ticks "$service_pid")
  pg2=$(pg_ticks)
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  done_rq=$(awk '/requests in/ {print $1}' "$work/wrk.out")
  echo "  CPU us: PostgreSQL per pgbench transaction $(us_per "$done_tx" "$pg1 - $pg0"); per service request: PostgreSQL $(us_per "$done_rq" "$pg2 - $pg1"), the service $(us_per "$done_rq" "$sv1 - $sv0")"
  [[ -s $work/wrk.err ]] && { echo "warning: $(sort "$work/wrk.err" | uniq -c | head -3)"; : >"$work/wrk.err"; }
  served=$(python3 -c "print($served + round($rps * $secs))")
  ratio=$(python3 -c "print(round($tps / $rps, 2))")
  ratios+=("$ratio")
  echo "round $round: pgbench $tps tps, service $rps req/s, pgbench / service $ratio"
done
hits=$(($(metric 'iq_cache_lookups_total[{].*cache="pages".*result="hit"') - hits0))
reads=$(($(metric 'iq_db_query_duration_seconds_count[{].*index_daily') - reads0))
statements >"$work/statements.after"
(($(wc -c <"$work/pg.log") - logged < 100000)) || echo "warning: the cluster kept logging statements during the runs"
echo "statements the service ran during its runs, by name:"
join -a2 "$work/statements.before" "$work/statements.after" 2>/dev/null |
  awk '{n = (NF == 3 ? $3 - $2 : $2); if (n > 0) printf "  %s %d\n", $1, n}'
echo "service: about $served requests, $reads index_daily statements, $hits page-cache hits"
echo "pgbench / service, median of ${#ratios[@]}: $(python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}") (goal <= 1.5)"
