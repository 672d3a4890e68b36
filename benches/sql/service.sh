# Shared by the scripts in benches/sql (sourced, not run): waiting for a started
# service, calling its API, and making a professional member's key through it.
# Expects `port` (the service's) and `work` (a temporary folder) to be set.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# PID LOG: polls /readyz until it answers (the first start loads demo data); shows LOG
# and fails if the service exits first.
wait_ready() {
  for _ in $(seq 1800); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || { cat "$2"; exit 1; }
    sleep 0.1
  done
  echo "no /readyz within 180 s" >&2
  exit 1
}

# [SETTING=VALUE...]: the service `bin` on DATABASE_URL, on a free `port`, logging to
# $work/service.log, two workers unless WORKERS says otherwise, with the settings given
# (PAGE_CACHE_MB=0, say); sets `service_pid` and returns once it is ready.
serve() {
  port=$(free_port)
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" DATABASE_URL="$DATABASE_URL" \
    KEY_SECRET="$(python3 -c 'import secrets; print(secrets.token_urlsafe(36))')" \
    LISTEN_ADDR="127.0.0.1:$port" METRICS_ADDR="127.0.0.1:$(free_port)" WORKERS="${WORKERS:-2}" \
    RUST_LOG=warn "$@" "$bin" serve >"$work/service.log" 2>&1 &
  service_pid=$!
  wait_ready "$service_pid" "$work/service.log"
}

api() { # METHOD PATH BODY [curl options]: the answer, which must have code 0
  local answer
  answer=$(curl -sS -X "$1" "http://127.0.0.1:$port$2" -H 'Content-Type: application/json' \
    ${3:+--data-binary "$3"} "${@:4}")
  python3 -c 'import json, sys; a = json.loads(sys.argv[1]); sys.exit(a["code"] != 0)' "$answer" ||
    { echo "$1 $2: $answer" >&2; exit 1; }
  printf '%s' "$answer"
}

# EXPRESSION over the JSON document `d` read from stdin, printed.
jq_() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

# NAME [raise]: a professional member's key (all eight indexes, no delay, 5000 rows a
# page), printed; with `raise`, the pro tier's limits are put out of reach first (the
# quota still runs its whole course on every call, it just never refuses).
pro_key() {
  local pw csrf tier
  pw=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
  api POST /api/v1/setup "{\"username\":\"bench_root\",\"password\":\"$pw\"}" >/dev/null
  csrf=$(api POST /api/v1/auth/login "{\"username\":\"bench_root\",\"password\":\"$pw\"}" \
    -c "$work/root" | jq_ 'd["data"]["csrf_token"]')
  if [[ ${2:-} == raise ]]; then
    tier=$(api GET /api/v1/admin/tiers "" -b "$work/root" | jq_ 'json.dumps({k: (10**9 if k in ("per_minute", "per_day") else v) for t in d["data"] if t["tier"] == "pro" for k, v in t.items() if k != "tier"})')
    api PUT /api/v1/admin/tiers/pro "$tier" -b "$work/root" -H "X-CSRF-Token: $csrf" >/dev/null
  fi
  api POST /api/v1/admin/users "{\"username\":\"bench_pro\",\"password\":\"$pw\",\"tier\":\"pro\"}" \
    -b "$work/root" -H "X-CSRF-Token: $csrf" >/dev/null
  csrf=$(api POST /api/v1/auth/login "{\"username\":\"bench_pro\",\"password\":\"$pw\"}" \
    -c "$work/pro" | jq_ 'd["data"]["csrf_token"]')
  api POST /api/v1/keys "{\"name\":\"$1\"}" -b "$work/pro" -H "X-CSRF-Token: $csrf" |
    jq_ 'd["data"]["key"]'
}

# ROWS: about ROWS quotes (quotes.py: 7 indexes x 100 specifications a weekday from
# 2021-01-04) imported with `bin import` into DATABASE_URL, weekdays opened a month past
# them, the tables analysed; sets `end_date` to the last day with quotes. Before `serve`.
load_quotes() {
  end_date=$(python3 "$(dirname "${BASH_SOURCE[0]}")/quotes.py" "$work" "$1")
  open_weekdays 2021-01-04 "$(date -d "$end_date +30 days" +%F)"
  local t0
  t0=$(date +%s.%N)
  "$bin" import "$work/quotes.csv" >"$work/import.log" 2>&1 || { cat "$work/import.log"; exit 1; }
  echo "import: $(psql "$DATABASE_URL" -AtXc 'SELECT count(*) FROM index_quotes') rows in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s; end_date $end_date"
  psql "$DATABASE_URL" -qXc "VACUUM ANALYZE"
}
