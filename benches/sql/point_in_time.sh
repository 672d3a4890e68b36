#!/usr/bin/env bash
# What point-in-time history (D17) costs a page of quotes, measured with pgbench against
# the same statements the service sends, on six years of quotes (7 indexes x 20
# specifications a day, 215k rows) plus one correction of 20 days.
#
#   benches/sql/point_in_time.sh            # needs target/debug/iq-service, pgbench, psql
#
# Prints transactions per second for: today's page as it was before history was kept
# (`before`), today's page now (`now`: the same SQL with a NULL in place of the
# on-demand published_at), the same page with published_at (`published_at`), and as
# of the moment before the correction (`as_of`), each for 5 s at 2 clients, twice,
# alternating. Set PGURL to use a server other than postgres@127.0.0.1:5432.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IQ_SERVICE:-$here/../../target/debug/iq-service}
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
create_database iq_pit_bench
weekday_quotes 2021-01-04 2026-11-20 <<'PY'
with open(f"{out}/full.csv", "w") as f:
    f.write("trade_date,index_code,specification,weight,price\n")
    for day in days:
        for c in codes:
            for s in range(20):
                f.write(f"{day:%Y%m%d},{c},spec {s:02d},0.05,{1000 + s * 10 + random.randint(0, 50)}\n")
with open(f"{out}/fix.csv", "w") as f:
    f.write("trade_date,index_code,specification,weight,price\n")
    for day in days[800:820]:
        for s in range(20):
            f.write(f"{day:%Y%m%d},GPU_Index,spec {s:02d},0.05,{2000 + s}\n")
PY
open_weekdays 2021-01-04 2026-11-30
"$bin" import "$work/full.csv" "$work/fix.csv"
at=$(psql "$DATABASE_URL" -Atc "SELECT published_at FROM vintages WHERE vintage = (SELECT max(vintage) - 1 FROM vintages)")
filter="q.trade_date <= '2026-11-20' AND q.index_code = ANY('{GPU_Index}') AND q.index_code = 'GPU_Index' AND q.trade_date >= '2024-01-01' ORDER BY q.trade_date, q.index_code, q.specification LIMIT 1001 OFFSET 0"
cols="q.trade_date, q.index_code, q.specification, q.weight, q.price"
v="(SELECT coalesce(max(vv.vintage), 0) FROM vintages vv WHERE vv.published_at <= '$at')"
qc="trade_date, index_code, specification, weight, price, vintage"
echo "SELECT $cols FROM index_quotes q WHERE $filter;" > "$work/before.sql"
echo "SELECT $cols, NULL FROM index_quotes q WHERE $filter;" > "$work/now.sql"
echo "SELECT $cols, (SELECT p.published_at FROM vintages p WHERE p.vintage = q.vintage) FROM index_quotes q WHERE $filter;" > "$work/published_at.sql"
echo "SELECT $cols, NULL FROM (SELECT $qc FROM index_quotes WHERE vintage <= $v UNION ALL SELECT $qc FROM index_quotes_history WHERE vintage <= $v AND superseded_by > $v) q WHERE $filter;" > "$work/as_of.sql"
two_rounds before now published_at as_of
