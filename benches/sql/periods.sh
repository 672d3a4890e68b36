#!/usr/bin/env bash
# What a page of `index_weekly` (D25) costs through the service against a page of
# `index_daily` of the same number of rows, both uncached (issue 48: at most 2x).
#
#   benches/sql/periods.sh   # needs an iq-service binary, psql, curl, python3
#
# A weekly row is not stored: it is grouped from the daily rows at query time
# (catalogue `period_from`), so a page of weekly rows reads about five daily rows for
# each row it answers, and every week before the page's first (the windows need the
# week before, and the grouping runs before the page's bounds). A page of 5,000 weekly
# rows of eight indexes is 625 weeks; so the data are twelve years of weekdays
# (2014-11-24 .. 2026-11-20) of the seven quote-bearing indexes, 2 specifications
# each, imported as one file (the composite follows), about 25,000 daily rows.
#
# Then the service with its page cache off (PAGE_CACHE_MB=0) answers the first page of
# PAGE rows (default 5000, the pro tier's largest) of each, REQUESTS times (default 50)
# alternating, and prints the medians and their ratio; `index_monthly`'s whole answer
# (about 1,150 rows) is timed the same way for comparison.
# Set PGURL to use a server other than postgres@127.0.0.1:5432.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IQ_SERVICE:-$here/../../target/release/iq-service}
[[ -x $bin ]] || bin=$here/../../target/debug/iq-service
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
# shellcheck source=benches/sql/service.sh
source "$here/service.sh"
create_database "iq_periods_bench_$$"
weekday_quotes 2014-11-24 2026-11-20 <<'PY'
with open(f"{out}/years.csv", "w") as f:
    f.write("trade_date,index_code,specification,weight,price\n")
    for day in days:
        for c in codes:
            for s in range(2):
                f.write(f"{day:%Y%m%d},{c},spec {s},0.5,{1000 + s * 10 + random.randint(0, 50)}\n")
PY
open_weekdays 2014-11-24 2026-11-30
t0=$(date +%s.%N)
"$bin" import "$work/years.csv" >"$work/import.log" 2>&1 || { cat "$work/import.log"; exit 1; }
echo "import: $(psql "$DATABASE_URL" -AtXc 'SELECT count(*) FROM index_daily') daily rows in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
psql "$DATABASE_URL" -qXc "VACUUM ANALYZE"

serve PAGE_CACHE_MB=0
key=$(pro_key "periods bench" raise)
page=${PAGE:-5000}
requests=${REQUESTS:-50}
python3 "$here/pages.py" "$port" "$key" "$page" "$requests" index_weekly index_daily
monthly=$(psql "$DATABASE_URL" -AtXc "SELECT count(*) FROM (SELECT DISTINCT index_code, date_trunc('month', trade_date) FROM index_daily) m")
python3 "$here/pages.py" "$port" "$key" "$monthly" "$requests" index_monthly index_daily
