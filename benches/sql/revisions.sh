#!/usr/bin/env bash
# What a page of `index_revisions` (D21) costs against a page of `index_daily` of the
# same number of rows, measured with pgbench against the statements the service sends
# (actors/src/dataset/sql.rs builds them from the catalogue), on one year of
# corrections.
#
#   benches/sql/revisions.sh   # needs an iq-service binary, pgbench, psql, curl, python3
#
# The data: a year of weekdays (2025-11-24 .. 2026-11-20) of the seven indexes, 10
# specifications each, imported as one file; then one correction a trading day, each
# its own import (a vintage), re-sending one day of two indexes with one price changed,
# as a publisher correcting yesterday's quotes would. A correction revises that day and
# the next of the two indexes (D26: levels are ratios to the base day, the next day's
# change follows) and every later day of the composite, which is chained on the daily
# changes. The script prints the count, and the base indexes' and the composite's
# shares of it.
#
# Then the same two first pages through the service (page cache off), median latency.
#
# Statements, each for 5 s at 2 clients, two rounds alternating, transactions per
# second: the first page of `index_daily` (all visible indexes, LIMIT = PAGE rows) and of
# `index_revisions` (same LIMIT), and each one's second page started after the first
# page's last row (the deep-page seek: a row comparison for index_daily, the descending
# comparison spelt out for index_revisions). PAGE defaults to half the revisions there
# are (so both pages are full), at most 1000. Set PGURL to use a server other than postgres@127.0.0.1:5432.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IQ_SERVICE:-$here/../../target/release/iq-service}
[[ -x $bin ]] || bin=$here/../../target/debug/iq-service
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
# shellcheck source=benches/sql/service.sh
source "$here/service.sh"
create_database "iq_revisions_bench_$$"
weekday_quotes 2025-11-24 2026-11-20 <<'PY'
price = {(day, c, s): 1000 + s * 10 + random.randint(0, 50) for day in days for c in codes for s in range(10)}
def write(path, rows):
    with open(path, "w") as f:
        f.write("trade_date,index_code,specification,weight,price\n")
        for day, c, s in rows:
            f.write(f"{day:%Y%m%d},{c},spec {s},0.1,{price[(day, c, s)]}\n")
write(f"{out}/year.csv", [(day, c, s) for day in days for c in codes for s in range(10)])
names = []
for i, day in enumerate(days[:-1]):
    fixed = [codes[i % 7], codes[(i + 3) % 7]]
    for c in fixed:
        price[(day, c, 0)] += 7
    name = f"{out}/fix_{i:03d}.csv"
    write(name, [(day, c, s) for c in fixed for s in range(10)])
    names.append(name)
with open(f"{out}/fixes", "w") as f:
    f.write("\n".join(names))
PY
open_weekdays 2025-11-24 2026-11-30
"$bin" import "$work/year.csv" >/dev/null
# shellcheck disable=SC2046
"$bin" import $(cat "$work/fixes") >/dev/null
# As autovacuum would have by the time anyone reads: statistics, and no dead rows left
# by the corrections' rewrites.
psql "$DATABASE_URL" -qXc "VACUUM ANALYZE"
revisions=$(psql "$DATABASE_URL" -AtXc "SELECT count(*) FROM index_revisions")
daily=$(psql "$DATABASE_URL" -AtXc "SELECT count(*) FROM index_daily")
page=${PAGE:-$(( revisions / 2 < 1000 ? revisions / 2 : 1000 ))}
echo "rows: $daily index_daily, $revisions index_revisions (one year of corrections); page: $page rows"
psql "$DATABASE_URL" -AtXc "SELECT CASE WHEN index_code = 'Hardware_Index' THEN 'composite' ELSE 'base indexes' END, count(*), count(DISTINCT published_at) FROM index_revisions GROUP BY 1 ORDER BY 1" |
  while IFS='|' read -r part count corrections; do
    echo "  $part: $count revisions from $corrections corrections"
  done

# As a pro key sees them: every index visible, detail for the aggregate ones, cutoff today.
visible="'{Server_Index,Server_Rental_Index,GPU_Index,DRAM_Index,SSD_Index,CPU_Index,OI_Index,Hardware_Index}'"
detailed="'{Server_Index,Server_Rental_Index}'"
cutoff="'2026-11-20'"
dcols="d.trade_date, d.index_code, d.index_value, CASE WHEN d.index_code = ANY($detailed) THEN d.weighted_price END, d.pre_value, d.change, d.pct_change, NULL"
rcols="r.index_code, r.trade_date, r.published_at, r.previous_published_at, r.previous_value, r.index_value, r.change"
dfrom="FROM index_daily d WHERE d.trade_date <= $cutoff AND d.index_code = ANY($visible)"
rfrom="FROM index_revisions r WHERE r.trade_date <= $cutoff AND r.index_code = ANY($visible)"
dorder="ORDER BY d.trade_date, d.index_code LIMIT $((page + 1))"
rorder="ORDER BY r.published_at DESC, r.index_code, r.trade_date LIMIT $((page + 1))"
echo "SELECT $dcols $dfrom $dorder;" > "$work/daily.sql"
echo "SELECT $rcols $rfrom $rorder;" > "$work/revisions.sql"
# The last row of each first page: where its second page starts.
IFS='|' read -r dd dc < <(psql "$DATABASE_URL" -AtXc "SELECT d.trade_date, d.index_code $dfrom ORDER BY d.trade_date, d.index_code OFFSET $((page - 1)) LIMIT 1")
IFS='|' read -r rp rc rd < <(psql "$DATABASE_URL" -AtXc "SELECT r.published_at, r.index_code, r.trade_date $rfrom ORDER BY r.published_at DESC, r.index_code, r.trade_date OFFSET $((page - 1)) LIMIT 1")
echo "SELECT $dcols $dfrom AND (d.trade_date, d.index_code) > ('$dd', '$dc') $dorder;" > "$work/daily_after.sql"
echo "SELECT $rcols $rfrom AND (r.published_at < '$rp' OR (r.published_at = '$rp' AND (r.index_code > '$rc' OR (r.index_code = '$rc' AND r.trade_date > '$rd')))) $rorder;" > "$work/revisions_after.sql"
two_rounds daily revisions daily_after revisions_after

# Through the service, as a client sees it: the page cache off (PAGE_CACHE_MB=0), so
# every request reads the database and renders its rows (two timestamps a row for
# revisions); REQUESTS of each, alternating, on one keep-alive connection.
serve PAGE_CACHE_MB=0
key=$(pro_key "revisions bench" raise)
python3 "$here/pages.py" "$port" "$key" "$page" "${REQUESTS:-200}" index_revisions index_daily
