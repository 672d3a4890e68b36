#!/usr/bin/env bash
# The request path against the HTTP floor (issue 14): one command that measures what
# the service's request path costs beyond answering HTTP at all.
#
#   benches/request_path.sh
#
# It builds the release binary, starts it on a fresh database with demo data, makes a
# professional member's API key through the HTTP API, captures the service's answers
# to a cached key query, a visitor query and GET /healthz, and has nginx answer the
# very same bytes from memory: nginx is the floor. Then wrk drives both in alternating
# rounds and the script prints, against the issue's goals:
#
#   - requests per second of the service / nginx, for each of the three requests;
#   - CPU microseconds per cached key request, the whole process and its busiest thread,
#     and that thread's share of the process (from /proc, around the saturated runs);
#   - where the two cores' time goes per request: the server's user and kernel time,
#     PostgreSQL's, wrk's own and the rest, and the ratio to nginx the cached key query
#     would reach if the service's user-space code cost nothing;
#   - p99 latency of the cached key query at half its maximum throughput (paced wrk);
#   - throughput with span export to an OTLP/HTTP sink / without, every request traced
#     and one in BENCH_TRACE_RATIO (two more instances of the service on the same
#     database, run in the same rounds);
#   - CPU per cached request on Tushare's wire (POST /tushare, the same index_daily call
#     with the key as the body's token) / the same cached key query on /api/v1/query,
#     run right after it in each round on the service (issue 48: at most 1.05), and
#     the two calls' instructions under callgrind;
#   - user-space instructions per cached key query, counted by callgrind on an instance
#     of its own, untraced, every request traced and one in BENCH_TRACE_RATIO: the one
#     figure that is the same on a busy and a quiet machine, to compare two builds
#     (BENCH_INSTRUCTIONS=0 skips it; valgrind is installed when missing);
#   - with BASE_BIN, the same figures for a second build (an older commit's release
#     binary, say) run in the same rounds, each on a fresh database of its own (the two
#     may differ in migrations), and this build / the base build side by side: the
#     way to tell whether a change made the request path cheaper on a machine whose
#     speed moves by a fifth between runs an hour apart.
#
# Everything it starts (the services, nginx, the database, its temporary folder) is
# removed when it exits, also on failure or Ctrl-C. docs/performance.md, "The request
# path against the HTTP floor", explains the figures.
#
# Settings (environment):
#   BENCH_SECS=10       seconds of each wrk run (the p99 run too)
#   BENCH_ROUNDS=2      rounds; each runs every request on the service and on nginx
#   BENCH_PACED_RUNS=3  paced runs for the p99 at half max, each on the service and on
#                       nginx; the median is reported (one run's p99 moves by a third)
#   BENCH_CLIENTS=32    wrk connections (-c)
#   BENCH_THREADS=2     wrk threads (-t)
#   WORKERS=4           the service's HTTP workers (and nginx's worker processes)
#   PGURL=postgres://postgres@127.0.0.1:5432   PostgreSQL to create the database on
#   INDEX_CODE=GPU_Index   the index of the two queries
#   IQ_BIN=             a prebuilt iq-service to measure instead of building one
#   SERVICE_ENV=        extra settings for both instances, e.g. "PAGE_CACHE_MB=64"
#   READY_TIMEOUT=180   seconds to wait for /readyz (the first start loads demo data)
#   BENCH_INSTRUCTIONS=1  count instructions per request under callgrind (0: skip)
#   BENCH_TRACE_RATIO=0.1  the sampled instance's parentbased_traceidratio, production's
#   BASE_BIN=           a second iq-service to measure beside this one, e.g. one built
#                       from an older commit:
#                         git worktree add /tmp/base <commit> &&
#                         (cd /tmp/base && cargo build --release --bin iq-service)
#                         BASE_BIN=/tmp/base/target/release/iq-service benches/request_path.sh

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
helpers=$here/request_path

secs=${BENCH_SECS:-10}
rounds=${BENCH_ROUNDS:-2}
paced_rounds=${BENCH_PACED_RUNS:-3}
clients=${BENCH_CLIENTS:-32}
threads=${BENCH_THREADS:-2}
workers=${WORKERS:-4}
pgurl=${PGURL:-postgres://postgres@127.0.0.1:5432}
pgurl=${pgurl%/}
index_code=${INDEX_CODE:-GPU_Index}
ready_timeout=${READY_TIMEOUT:-180}
trace_ratio=${BENCH_TRACE_RATIO:-0.1}

# Filled in as things start, so that cleanup removes exactly what was made.
tmp=""
database=""
base_database=""
service_pid=""
base_pid=""
traced_pid=""
sampled_pid=""
counted_pid=""
nginx_pid=""
# A command the next start_service runs the binary under (callgrind, once).
launcher=()

say() { printf '%s\n' "$*"; }
fail() {
    printf 'request_path.sh: %s\n' "$*" >&2
    exit 1
}

# --- Tools ---------------------------------------------------------------------------

# The distribution's packages, installed only when their command is missing.
ensure_tools() {
    local -A package_of=(
        [nginx]=nginx-light [wrk]=wrk [curl]=curl [jq]=jq [psql]=postgresql-client
        [python3]=python3 [valgrind]=valgrind
    )
    local missing=() command
    for command in "${!package_of[@]}"; do
        # nginx is in /usr/sbin, which is not on every user's PATH.
        command -v "$command" >/dev/null || [[ -x /usr/sbin/$command ]] ||
            missing+=("${package_of[$command]}")
    done
    if ((${#missing[@]})); then
        say "installing ${missing[*]}"
        local sudo=()
        ((EUID == 0)) || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
    fi
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
}

# The release binary; cargo itself decides whether it is fresh (a no-op takes a second).
build_service() {
    if [[ -n ${IQ_BIN:-} ]]; then
        bin=$IQ_BIN
    else
        say "building the release binary (cargo build --release --bin iq-service)"
        (cd "$repo" && cargo build --release --bin iq-service)
        bin=$(cd "$repo" && cargo metadata --format-version 1 --no-deps |
            jq -r .target_directory)/release/iq-service
    fi
    [[ -x $bin ]] || fail "no binary at $bin"
    base_bin=${BASE_BIN:-}
    [[ -z $base_bin || -x $base_bin ]] || fail "no binary at BASE_BIN=$base_bin"
}

# --- Clean-up --------------------------------------------------------------------------

# SIGTERM, then SIGKILL if the process has not gone within 20 s.
stop_process() {
    local pid=$1 i
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if ((status != 0)) && [[ -n $tmp ]]; then
        local log
        for log in "$tmp"/service.log "$tmp"/base.log "$tmp"/traced.log "$tmp"/sampled.log \
            "$tmp"/nginx/error.log; do
            [[ -s $log ]] && { say "--- last lines of $(basename "$log"):"; tail -n 15 "$log"; }
        done
    fi
    stop_process "$counted_pid"
    stop_process "$traced_pid"
    stop_process "$sampled_pid"
    stop_process "$service_pid"
    stop_process "$base_pid"
    stop_process "$nginx_pid"
    local made
    for made in "$database" "$base_database"; do
        [[ -n $made ]] || continue
        psql "$pgurl/postgres" -qX -v ON_ERROR_STOP=1 \
            -c "DROP DATABASE IF EXISTS \"$made\" WITH (FORCE)" >/dev/null ||
            say "could not drop database $made"
    done
    [[ -n $tmp ]] && rm -rf "$tmp"
    exit "$status"
}

# --- Helpers ---------------------------------------------------------------------------

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# NAME RECORD: the value of NAME=value in a line of NAME=value fields.
field() {
    sed -En "s/(^|.* )$1=([^ ]*).*/\\2/p" <<<"$2"
}

random_text() {
    python3 -c "import secrets; print(secrets.token_urlsafe($1))"
}

# One JSON call to the instance on $api_port: METHOD PATH BODY [curl options...].
# Prints the answer; fails unless its code is 0.
api() {
    local method=$1 path=$2 body=$3 answer
    shift 3
    local data=()
    [[ -n $body ]] && data=(-H 'Content-Type: application/json' --data-binary "$body")
    answer=$(curl -sS -X "$method" "http://127.0.0.1:$api_port$path" \
        ${data[@]+"${data[@]}"} "$@")
    jq -e '.code == 0' <<<"$answer" >/dev/null || fail "$method $path answered: $answer"
    printf '%s' "$answer"
}

# --- The service ---------------------------------------------------------------------

# VAR: a fresh database, its name into VAR (which cleanup drops).
create_database() {
    local name
    name=iq_bench_request_path_$$_$(random_text 4 | tr -dc 'a-z0-9')
    printf -v "$1" '%s' "$name"
    psql "$pgurl/postgres" -qX -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$name\"" \
        >/dev/null
}

# NAME BIN DATABASE PORT [SETTING=value...]: one instance of BIN on DATABASE, in a clean
# environment (an OTEL_* or RUST_LOG of the caller's shell must not change what is
# measured). The settings are the defaults but for: demo data, two ports, the workers,
# and no per-minute limit on visitors (WEBSITE_PER_MINUTE=0), whose 300 a minute would
# refuse the visitor runs. Logs are JSON lines at info with an access line per request,
# as in production; they go to a file the runs truncate.
start_service() {
    local name=$1 binary=$2 db=$3 port=$4
    shift 4
    # shellcheck disable=SC2086 # SERVICE_ENV is a list of settings
    env -i PATH="$PATH" HOME="${HOME:-/tmp}" \
        DATABASE_URL="$pgurl/$db" KEY_SECRET="$key_secret" DEMO_DATA=1 \
        LISTEN_ADDR="127.0.0.1:$port" METRICS_ADDR="127.0.0.1:$(free_port)" \
        WORKERS="$workers" LOG_FORMAT=json RUST_LOG=info ACCESS_LOG=all \
        WEBSITE_PER_MINUTE=0 ${SERVICE_ENV:-} "$@" \
        ${launcher[@]+"${launcher[@]}"} "$binary" serve >>"$tmp/$name.log" 2>&1 &
    started_pid=$!
}

# PID PORT: polls /readyz until it answers 200 (the database answers and is migrated).
wait_ready() {
    local pid=$1 port=$2 deadline=$((SECONDS + ready_timeout))
    until curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || fail "the service on port $port exited during start-up"
        ((SECONDS < deadline)) || fail "no /readyz within $ready_timeout s on port $port"
        sleep 0.1
    done
}

# A super administrator (POST /setup), the pro tier's limits raised out of reach (the
# pro tier allows 10000 calls a minute, which one run passes in seconds; raised, the
# quota still runs its whole course on every call but never refuses), a pro member
# (POST /admin/users) who logs in and creates a key (POST /keys). PORT VAR: on the
# instance on PORT; the key into VAR.
make_pro_key() {
    local api_port=$1 password root_jar=$tmp/root.cookies pro_jar=$tmp/pro.cookies csrf tier
    local key
    password=$(random_text 18)
    api POST /api/v1/setup "{\"username\":\"bench_root\",\"password\":\"$password\"}" >/dev/null
    csrf=$(api POST /api/v1/auth/login \
        "{\"username\":\"bench_root\",\"password\":\"$password\"}" -c "$root_jar" |
        jq -r .data.csrf_token)
    tier=$(api GET /api/v1/admin/tiers "" -b "$root_jar" |
        jq -c '.data[] | select(.tier == "pro")
               | {per_minute: 1000000000, per_day: 1000000000, max_rows, max_keys,
                  delay_days, member_indexes}')
    api PUT /api/v1/admin/tiers/pro "$tier" -b "$root_jar" -H "X-CSRF-Token: $csrf" >/dev/null
    api POST /api/v1/admin/users \
        "{\"username\":\"bench_pro\",\"password\":\"$password\",\"tier\":\"pro\"}" \
        -b "$root_jar" -H "X-CSRF-Token: $csrf" >/dev/null
    csrf=$(api POST /api/v1/auth/login \
        "{\"username\":\"bench_pro\",\"password\":\"$password\"}" -c "$pro_jar" |
        jq -r .data.csrf_token)
    key=$(api POST /api/v1/keys '{"name":"request_path bench"}' \
        -b "$pro_jar" -H "X-CSRF-Token: $csrf" | jq -r .data.key)
    api GET /api/v1/membership "" -H "X-API-Key: $key" |
        jq -e '.data.tier == "pro"' >/dev/null || fail "the key is not a pro member's"
    printf -v "$2" '%s' "$key"
}

# NAME METHOD PATH [curl options...]: the answer's body into $tmp/NAME.body and its
# Content-Type into $tmp/NAME.type. Asked twice: the second answer is the cached one.
capture() {
    local name=$1 method=$2 path=$3
    shift 3
    local url=http://127.0.0.1:$service_port$path
    curl -sS -o /dev/null -X "$method" "$url" "$@"
    curl -sS -o "$tmp/$name.body" -D "$tmp/$name.headers" -X "$method" "$url" "$@"
    head -n 1 "$tmp/$name.headers" | grep -q ' 200' ||
        fail "$method $path answered $(head -n 1 "$tmp/$name.headers")"
    jq -e '.code == 0' "$tmp/$name.body" >/dev/null || fail "$method $path: $(cat "$tmp/$name.body")"
    tr -d '\r' <"$tmp/$name.headers" | sed -n 's/^[Cc]ontent-[Tt]ype: *//p' >"$tmp/$name.type"
}

capture_answers() {
    capture key POST /api/v1/query -H 'Content-Type: application/json' \
        -H "X-API-Key: $api_key" --data-binary "$query"
    capture visitor POST /api/v1/query -H 'Content-Type: application/json' \
        --data-binary "$query"
    capture healthz GET /healthz
    capture tushare POST /tushare -H 'Content-Type: application/json' \
        --data-binary "$tushare_query"
    [[ $(jq '.data.items | length' "$tmp/tushare.body") == $(jq .data.returned "$tmp/key.body") ]] ||
        fail "the /tushare call answered other rows than the key query: $(head -c 400 "$tmp/tushare.body")"
    jq -e '.data.returned > 0' "$tmp/key.body" >/dev/null ||
        fail "the key query returned no rows: $(cat "$tmp/key.body")"
    cmp -s "$tmp/key.type" "$tmp/visitor.type" ||
        fail "the key and visitor answers differ in Content-Type; nginx.conf.in needs a second location"
    say "answers: key query $(wc -c <"$tmp/key.body") bytes ($(jq .data.returned "$tmp/key.body") rows)," \
        "visitor $(wc -c <"$tmp/visitor.body") bytes ($(jq .data.returned "$tmp/visitor.body") rows)," \
        "healthz $(wc -c <"$tmp/healthz.body") bytes"
}

# --- nginx: the floor, and the OTLP sink ---------------------------------------------

start_nginx() {
    local prefix=$tmp/nginx user_line=""
    mkdir -p "$prefix"
    # Run as root, nginx would hand its workers to "nobody"; keep them as the caller.
    ((EUID == 0)) && user_line="user root;"
    nginx_port=$(free_port)
    sink_port=$(free_port)
    python3 "$helpers/nginx_conf.py" "$helpers/nginx.conf.in" "$prefix/nginx.conf" \
        PREFIX="$prefix" WORKERS="$workers" PORT="$nginx_port" SINK_PORT="$sink_port" \
        USER_LINE="$user_line" QUERY_TYPE="$(cat "$tmp/key.type")" \
        HEALTH_TYPE="$(cat "$tmp/healthz.type")" KEY_BODY="@$tmp/key.body" \
        VISITOR_BODY="@$tmp/visitor.body" HEALTH_BODY="@$tmp/healthz.body"
    "$nginx_bin" -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" &
    nginx_pid=$!
    local deadline=$((SECONDS + 10))
    until curl -fsS -o /dev/null "http://127.0.0.1:$nginx_port/healthz" 2>/dev/null; do
        kill -0 "$nginx_pid" 2>/dev/null || fail "nginx did not start"
        ((SECONDS < deadline)) || fail "nginx did not answer within 10 s"
        sleep 0.1
    done
    # The floor must answer exactly what the service answered.
    local name
    curl -sS -o "$tmp/nginx-key.body" -X POST -H "X-API-Key: $api_key" \
        --data-binary "$query" "http://127.0.0.1:$nginx_port/api/v1/query"
    curl -sS -o "$tmp/nginx-visitor.body" -X POST --data-binary "$query" \
        "http://127.0.0.1:$nginx_port/api/v1/query"
    curl -sS -o "$tmp/nginx-healthz.body" "http://127.0.0.1:$nginx_port/healthz"
    for name in key visitor healthz; do
        cmp -s "$tmp/$name.body" "$tmp/nginx-$name.body" ||
            fail "nginx's $name answer differs from the service's"
    done
}

# --- Measuring -----------------------------------------------------------------------

# The process ids whose CPU counts for a target: the service's one process, or nginx's
# master and workers.
pids_of() {
    case $1 in
    service) echo "$service_pid" ;;
    base) echo "$base_pid" ;;
    traced) echo "$traced_pid" ;;
    sampled) echo "$sampled_pid" ;;
    nginx) echo "$nginx_pid" $(pgrep -P "$nginx_pid") ;;
    esac
}

port_of() {
    case $1 in
    service) echo "$service_port" ;;
    base) echo "$base_port" ;;
    traced) echo "$traced_port" ;;
    sampled) echo "$sampled_port" ;;
    counted) echo "$counted_port" ;;
    nginx) echo "$nginx_port" ;;
    esac
}

# SHAPE TARGET SECONDS [WRK_DELAY_MS]: one wrk run; prints its WRK_RESULT fields. wrk's
# own CPU seconds (user + system) go to $tmp/wrk.cpu: wrk shares the cores it measures.
wrk_run() {
    local shape=$1 target=$2 duration=$3 delay=${4:-} method=POST path=/api/v1/query
    local body=$query key=""
    case $shape in
    key) case $target in
        base) key=$base_key ;;
        counted) key=$counted_key ;;
        *) key=$api_key ;;
        esac ;;
    visitor) ;;
    healthz) method=GET path=/healthz body="" ;;
    tushare) path=/tushare body=$tushare_query ;; # the key is the body's token
    esac
    local TIMEFORMAT='%U %S'
    { time WRK_METHOD=$method WRK_BODY=$body WRK_API_KEY=$key WRK_DELAY_MS=$delay \
        wrk -t"$threads" -c"$clients" -d"${duration}s" -s "$helpers/wrk.lua" \
        "http://127.0.0.1:$(port_of "$target")$path" >"$tmp/wrk.out" 2>&1; } 2>"$tmp/wrk.time" ||
        { cat "$tmp/wrk.out" >&2; fail "wrk failed"; }
    awk '{ print $1 + $2 }' "$tmp/wrk.time" >"$tmp/wrk.cpu"
    sed -n 's/^WRK_RESULT //p' "$tmp/wrk.out"
}

# ROUND SHAPE TARGET: a saturated run with the CPU of the target's processes read
# from /proc just before and just after it; one "run" record into the results.
measure() {
    local round=$1 shape=$2 target=$3 result requests cpu
    # shellcheck disable=SC2046 # one argument per pid
    python3 "$helpers/cpu.py" snapshot $(pids_of "$target") >"$tmp/cpu.before"
    result=$(wrk_run "$shape" "$target" "$secs")
    # shellcheck disable=SC2046
    python3 "$helpers/cpu.py" snapshot $(pids_of "$target") >"$tmp/cpu.after"
    requests=$(field requests "$result")
    cpu=$(python3 "$helpers/cpu.py" report "$tmp/cpu.before" "$tmp/cpu.after" "$requests" \
        "$(cat "$tmp/wrk.cpu")")
    # Spans the traced instance could not queue are dropped with a warning: then it
    # did less work than tracing every request costs.
    local dropped=""
    [[ $target == traced || $target == sampled ]] &&
        dropped="drop_warnings=$(grep -ci 'dropped' "$tmp/$target.log" || true)"
    echo "run round=$round shape=$shape target=$target rps=$(rate "$result") $result $cpu $dropped" \
        >>"$tmp/results"
    printf '  round %s  %-8s %-7s %7s req/s  p99 %6s us  CPU %6s us/req  busiest thread %s\n' \
        "$round" "$shape" "$target" "$(rate "$result")" "$(field p99_us "$result")" \
        "$(field process_us "$cpu")" "$(field busiest_share "$cpu")"
    # The access log grows by hundreds of MB a minute under load; only its last lines
    # are of interest (they are printed on failure).
    : >"$tmp/service.log"
    : >"$tmp/traced.log"
    : >"$tmp/sampled.log"
    : >"$tmp/base.log"
}

# The rounds: each request on the service, the base build if any, and nginx (and the
# cached key query on the traced instance) back to back, in the reverse order every
# other round.
run_rounds() {
    local round shape targets
    for ((round = 1; round <= rounds; round++)); do
        # Tushare's call right after the key query it is compared with: the machine's
        # speed drifts within a round.
        for shape in key tushare visitor healthz; do
            targets=(service)
            [[ $shape == key ]] && targets+=(traced sampled)
            # Tushare's wire is compared with the key query on the service alone: nginx
            # answers no /tushare, and an older base build may have none.
            if [[ $shape != tushare ]]; then
                [[ -n $base_pid ]] && targets+=(base)
                targets+=(nginx)
            fi
            if ((round % 2 == 0)); then
                targets=($(printf '%s\n' "${targets[@]}" | tac))
            fi
            for target in "${targets[@]}"; do
                measure "$round" "$shape" "$target"
            done
        done
    done
}

# p99 of the cached key query at half the maximum throughput measured in the rounds,
# on the service and, at the same rate, on nginx (what the machine itself adds: wrk and
# the server share its cores). wrk2 is not packaged, so wrk paces itself (wrk.lua,
# delay()): each connection pauses between a response and its next request. The pause
# that gives the rate is found in two steps: a short run pausing one request interval
# (clients / rate) tells how long a request itself takes at that load; the measured run
# pauses for the interval less that.
paced_runs() {
    local max target
    max=$(grep '^run .* shape=key target=service ' "$tmp/results" | while read -r line; do
        field rps "$line"
    done | sort -n | awk '{ v[NR] = $1 }
        END { printf "%.0f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    target=$(awk -v m="$max" 'BEGIN { printf "%.0f", m / 2 }')
    say "p99 of the cached key query at half its maximum ($target of $max req/s):"
    local run
    for run in $(seq "$paced_rounds"); do
        paced_run service "$max" "$target"
        [[ -n $base_pid ]] && paced_run base "$max" "$target"
        paced_run nginx "$max" "$target"
    done
}

# TARGET MAX RATE: one paced run; one "paced" record into the results.
paced_run() {
    local target=$1 max=$2 rate=$3 interval delay result rps
    interval=$(awk -v c="$clients" -v r="$rate" 'BEGIN { printf "%.3f", 1000 * c / r }')
    result=$(wrk_run key "$target" 3 "$interval")
    rps=$(rate "$result")
    # At a pause of one interval, each connection's cycle was 1000 * clients / rps ms;
    # what it spent beyond the pause is the request's own time, to take off the pause.
    delay=$(awk -v c="$clients" -v i="$interval" -v r="$rps" \
        'BEGIN { d = i - (1000 * c / r - i); printf "%.3f", d < 0 ? 0 : d }')
    result=$(wrk_run key "$target" "$secs" "$delay")
    rps=$(rate "$result")
    echo "paced target=$target max_rps=$max target_rps=$rate rps=$rps delay_ms=$delay $result" \
        >>"$tmp/results"
    printf '  %-7s %7s req/s (pause %s ms a connection)  p50 %6s us  p99 %6s us\n' \
        "$target" "$rps" "$delay" "$(field p50_us "$result")" "$(field p99_us "$result")"
    : >"$tmp/service.log"
    : >"$tmp/base.log"
}

# User-space instructions per cached key query: a third instance on the same database
# under callgrind, counting only while wrk (one thread, 4 connections, BENCH_SECS)
# sends the query; its total over the requests wrk counted. Wall-clock rates move by a
# fifth between runs on a shared 2-core machine; this count moves by well under 1%,
# so it tells whether a change made the request path cheaper. The kernel's share (the
# sockets) is not in it.
#
# BUILD BIN DATABASE KEY: BUILD (service or base) names the record.
count_instructions() {
    [[ ${BENCH_INSTRUCTIONS:-1} != 0 ]] || return 0
    local build=$1 binary=$2 db=$3 port result out=$tmp/callgrind.$1.out
    counted_key=$4
    shift 4
    port=$(free_port)
    launcher=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out")
    start_service counted "$binary" "$db" "$port" "$@"
    launcher=()
    counted_pid=$started_pid
    wait_ready "$counted_pid" "$port"
    local saved_clients=$clients saved_threads=$threads shape=${COUNT_SHAPE:-key}
    clients=4 threads=1
    counted_port=$port
    wrk_run "$shape" counted 3 >/dev/null # the caches, the key's lease
    callgrind_control -i on "$counted_pid" >/dev/null
    result=$(wrk_run "$shape" counted "$secs")
    callgrind_control -i off "$counted_pid" >/dev/null
    clients=$saved_clients threads=$saved_threads
    stop_process "$counted_pid"
    counted_pid=""
    echo "instructions build=$build requests=$(field requests "$result")" \
        "total=$(sed -n 's/^totals: //p' "$out")" >>"$tmp/results"
}

# The base build (BASE_BIN): an instance on a database of its own, with a pro key of its
# own, whose cached key query must answer the rows the service answered.
start_base() {
    create_database base_database
    base_port=$(free_port)
    start_service base "$base_bin" "$base_database" "$base_port"
    base_pid=$started_pid
    wait_ready "$base_pid" "$base_port"
    make_pro_key "$base_port" base_key
    local answer
    curl -sS -o /dev/null -X POST -H "X-API-Key: $base_key" -H 'Content-Type: application/json' \
        --data-binary "$query" "http://127.0.0.1:$base_port/api/v1/query"
    answer=$(curl -sS -X POST -H "X-API-Key: $base_key" -H 'Content-Type: application/json' \
        --data-binary "$query" "http://127.0.0.1:$base_port/api/v1/query")
    jq -e '.code == 0' <<<"$answer" >/dev/null || fail "the base build answered: $answer"
    [[ $(jq -c .data <<<"$answer") == $(jq -c .data "$tmp/key.body") ]] ||
        say "NOTE: the base build's answer differs from this build's in its data"
    say "base build: $(build_name "$base_bin"), pid $base_pid on port $base_port," \
        "database $base_database"
}

# BIN: how a binary is named in the report: its path, and when it was built.
build_name() {
    printf '%s@%s' "$1" "$(date -r "$1" -u +%Y-%m-%dT%H:%MZ)"
}

# WRK_RESULT fields: requests per second.
rate() {
    echo $(($(field requests "$1") * 1000000 / $(field duration_us "$1")))
}

# --- Main ----------------------------------------------------------------------------

main() {
    ensure_tools
    build_service
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/request_path.XXXXXX")
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # The query of a quant client polling one index: its last month of daily values.
    query=$(jq -cn --arg code "$index_code" --arg start "$(date -d '30 days ago' +%Y%m%d)" \
        '{api_name: "index_daily", params: {index_code: $code, start_date: $start}}')

    key_secret=$(random_text 36)
    create_database database
    service_port=$(free_port)
    start_service service "$bin" "$database" "$service_port"
    service_pid=$started_pid
    say "service: pid $service_pid on port $service_port, database $database, waiting for /readyz"
    wait_ready "$service_pid" "$service_port"
    # Thread ids follow the order of creation; the CPU figures name threads by them.
    say "service threads (id name): $(for task in /proc/"$service_pid"/task/*; do
        printf '%s %s, ' "${task##*/}" "$(cat "$task/comm")"; done)"
    make_pro_key "$service_port" api_key
    # The same call on Tushare's wire, as the official SDK sends it (D24): the key as
    # the body's token, the code as ts_code, fields as an (empty) string.
    tushare_query=$(jq -cn --arg code "$index_code" --arg start "$(date -d '30 days ago' +%Y%m%d)" \
        --arg token "$api_key" \
        '{api_name: "index_daily", token: $token, params: {ts_code: $code, start_date: $start}, fields: ""}')
    capture_answers
    start_nginx
    say "nginx: pid $nginx_pid on port $nginx_port (OTLP sink on $sink_port)"
    every_request=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink_port")
    sampled_requests=("${every_request[@]}" OTEL_TRACES_SAMPLER=parentbased_traceidratio
        OTEL_TRACES_SAMPLER_ARG="$trace_ratio")
    [[ -n $base_bin ]] && start_base

    # The traced instances: the same binary, database and key, exporting to the sink
    # with the service's own batch settings: every request (the default sampler), and
    # one in BENCH_TRACE_RATIO (production's sampler).
    traced_port=$(free_port)
    start_service traced "$bin" "$database" "$traced_port" "${every_request[@]}"
    traced_pid=$started_pid
    wait_ready "$traced_pid" "$traced_port"
    sampled_port=$(free_port)
    start_service sampled "$bin" "$database" "$sampled_port" "${sampled_requests[@]}"
    sampled_pid=$started_pid
    wait_ready "$sampled_pid" "$sampled_port"
    say "traced service: pid $traced_pid on port $traced_port;" \
        "1 in $trace_ratio sampled: pid $sampled_pid on port $sampled_port"

    # Warm-up, not measured: caches, connection pools, the key's first lease.
    local shape target
    for target in service traced sampled ${base_pid:+base}; do
        for shape in key visitor; do
            wrk_run "$shape" "$target" 2 >/dev/null
        done
        [[ $target == service ]] && wrk_run tushare service 2 >/dev/null
    done
    : >"$tmp/service.log"
    : >"$tmp/traced.log"
    : >"$tmp/sampled.log"
    : >"$tmp/base.log"
    : >"$tmp/nginx/otlp.log"

    printf 'meta secs=%s threads=%s clients=%s workers=%s trace_ratio=%s build=%s base=%s\n' \
        "$secs" "$threads" "$clients" "$workers" "$trace_ratio" "$(build_name "$bin")" \
        "${base_bin:+$(build_name "$base_bin")}" >>"$tmp/results"
    say "rounds: $rounds x (3 requests on the service${base_pid:+, the base build} and nginx," \
        "the key query traced too), $secs s each, wrk -t$threads -c$clients"
    run_rounds
    awk '{ n++; b += ($2 == "-" ? 0 : $2) } END { printf "sink batches=%d bytes=%d\n", n, b }' \
        "$tmp/nginx/otlp.log" >>"$tmp/results"
    paced_runs
    say "instructions per cached key query (callgrind, $secs s)"
    count_instructions service "$bin" "$database" "$api_key"
    # The same cached call on Tushare's wire (its body carries the key as its token).
    COUNT_SHAPE=tushare count_instructions service_tushare "$bin" "$database" "$api_key"
    count_instructions traced "$bin" "$database" "$api_key" "${every_request[@]}"
    count_instructions sampled "$bin" "$database" "$api_key" "${sampled_requests[@]}"
    if [[ -n $base_pid ]]; then
        count_instructions base "$base_bin" "$base_database" "$base_key"
        count_instructions base_traced "$base_bin" "$base_database" "$base_key" \
            "${every_request[@]}"
        count_instructions base_sampled "$base_bin" "$base_database" "$base_key" \
            "${sampled_requests[@]}"
    fi

    say ""
    say "request_path: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average" \
        "$(cut -d' ' -f1-3 /proc/loadavg) at the end, $(basename "$bin")" \
        "$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')$(git --no-optional-locks -C "$repo" diff --quiet HEAD 2>/dev/null || echo ' + local changes')"
    python3 "$helpers/report.py" "$tmp/results"
}

main "$@"
