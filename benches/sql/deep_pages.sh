#!/usr/bin/env bash
# Deep pages (issue 14, item 4): what a bulk synchronisation of every index_quote row,
# page by page through POST /api/v1/query, costs against PostgreSQL's own floor, a
# COPY of the same rows in the same order.
#
#   benches/sql/deep_pages.sh     # needs psql, python3, curl and an iq-service binary
#
# On a fresh database it loads ROWS quotes (default about 1,000,000: 7 indexes x 100
# specifications a weekday from 2021-01-04, with `iq-service import`), starts the
# service, makes a professional member's key and then, in one run, measures ROUNDS times:
#   (a) COPY (SELECT trade_date, index_code, specification, weight, price FROM
#       index_quotes WHERE trade_date <= END ORDER BY the sort key) TO STDOUT, by psql;
#   (b) a client walking every page (limit 5000, end_date fixed, offset = previous
#       offset + returned until has_more is false) on one keep-alive connection;
# and prints both times, their ratio and the first, last and median page times, then the
# best of each over the rounds. Each walk's rows are checked against its COPY, cell for
# cell (outside the timing).
#
# It must never touch a database other than the one it creates; everything it starts
# (the service, the database, its temporary folder) is removed when it exits.
#
# Settings (environment): IQ_SERVICE (default target/release/iq-service, else debug),
# PGURL (postgres://postgres@127.0.0.1:5432), ROWS (1000000), LIMIT (5000),
# ROUNDS (3), WORKERS (2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$here/../..
bin=${IQ_SERVICE:-$repo/target/release/iq-service}
[[ -x $bin ]] || bin=$repo/target/debug/iq-service
rows=${ROWS:-1000000}
limit=${LIMIT:-5000}
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
# shellcheck source=benches/sql/service.sh
source "$here/service.sh"
create_database "iq_deep_pages_bench_$$"
echo "binary: $bin"

load_quotes "$rows"

serve
# A professional member's key (all eight indexes, no delay, 5000 rows a page).
key=$(pro_key "deep pages")

# ROUNDS rounds, each (a) then (b) on an end_date of its own (the last day with data, then
# the days after it: the same rows, but pages neither the service nor a client has seen,
# so every page of every walk is a page-cache miss). The first COPY warms the buffer
# cache for both.
copy() { # END_DATE
  echo "COPY (SELECT q.trade_date, q.index_code, q.specification, q.weight, q.price FROM index_quotes q WHERE q.trade_date <= '$1' ORDER BY q.trade_date, q.index_code, q.specification) TO STDOUT"
}
psql "$DATABASE_URL" -qXc "$(copy "$end_date")" >/dev/null
python3 - "$port" "$key" "$end_date" "$limit" "${ROUNDS:-3}" "$DATABASE_URL" "$work" <<'PY'
import datetime, http.client, json, re, subprocess, sys, time
port, key, end_date, limit, rounds, dburl, work = sys.argv[1:8]
conn = None
tail = re.compile(rb'"returned":(\d+),"has_more":(true|false)')
def page(end, offset):
    body = json.dumps({"api_name": "index_quote", "params": {"end_date": end},
                       "limit": int(limit), "offset": offset})
    conn.request("POST", "/api/v1/query", body,
                 {"Content-Type": "application/json", "X-API-Key": key})
    reply = conn.getresponse().read()
    # Only the envelope's end is read during the walk, as a syncing client must.
    m = tail.search(reply, max(0, len(reply) - 200))
    if not m:
        sys.exit(f"offset {offset}: {reply[:300]!r}")
    return reply, int(m.group(1)), m.group(2) == b"true"
def copy(end):
    sql = ("COPY (SELECT q.trade_date, q.index_code, q.specification, q.weight, q.price "
           f"FROM index_quotes q WHERE q.trade_date <= '{end}' "
           "ORDER BY q.trade_date, q.index_code, q.specification) TO STDOUT")
    with open(f"{work}/copy.tsv", "w") as out:
        t = time.perf_counter()
        subprocess.run(["psql", dburl, "-qXc", sql], stdout=out, check=True)
        return time.perf_counter() - t
def walk(end):
    # A connection of its own: the service closes one that idles while a round checks.
    global conn
    conn = http.client.HTTPConnection("127.0.0.1", int(port))
    bodies, times, offset, more = [], [], 0, True
    start = time.perf_counter()
    while more:
        t = time.perf_counter()
        reply, returned, more = page(end, offset)
        times.append(time.perf_counter() - t)
        bodies.append(reply)
        offset += returned
    return time.perf_counter() - start, times, bodies, offset
last = datetime.datetime.strptime(end_date, "%Y%m%d").date()
best = None
for r in range(int(rounds)):
    end = (last + datetime.timedelta(days=r)).strftime("%Y%m%d")
    copy_s = copy(end)
    walk_s, times, bodies, rows = walk(end)
    full = times[:-1] or times
    print(f"round {r + 1} (end_date {end}): (a) COPY {copy_s:6.3f} s   (b) walk {walk_s:6.3f} s "
          f"({len(times)} pages, {rows} rows)   ratio {walk_s / copy_s:5.2f}   pages: first "
          f"{times[0] * 1000:.1f} ms, last full {full[-1] * 1000:.1f} ms, median "
          f"{sorted(times)[len(times) // 2] * 1000:.1f} ms, slowest {max(times) * 1000:.1f} ms")
    # Outside the timing: the walk's rows are the COPY's, cell for cell, in order.
    with open(f"{work}/copy.tsv") as f:
        expected = [line.rstrip("\n").split("\t") for line in f]
    got = [[f"{c[0][:4]}-{c[0][4:6]}-{c[0][6:]}", c[1], c[2], c[3], c[4]]
           for reply in bodies for c in json.loads(reply)["data"]["items"]]
    if got != expected:
        bad = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        sys.exit(f"the walk differs from the COPY at row {bad} ({len(got)} vs {len(expected)} rows)")
    best = (min(best[0], copy_s), min(best[1], walk_s)) if best else (copy_s, walk_s)
print(f"best of {rounds}: (a) COPY {best[0]:.3f} s, (b) walk {best[1]:.3f} s, ratio {best[1] / best[0]:.2f}; "
      "every walk's rows equal its COPY's, in order")
PY
