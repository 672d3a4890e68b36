#!/usr/bin/env bash
# What one PostgreSQL primary can absorb of the fleet's quota and call-log writes,
# measured with pgbench against the service's own statements (migration V15
# functions), for the capacity model in docs/scaling.md.
#
#   benches/sql/capacity.sh          # needs target/debug/iq-service, pgbench, psql
#
# 1. flush: one quota_report as an instance sends it each QUOTA_FLUSH_MS: the spent
#    calls of 2 windows (a key's day and minute) and 1,000 call-log rows.
# 2. lease: one quota_lease_held for a key and its account (4 windows), keys drawn
#    from 10,000.
# Each runs 10 s at CLIENTS (default 8: a fleet's instances write at once) clients; it prints transactions/s and, for the flush, call-log
# rows/s. Set PGURL to use a server other than postgres@127.0.0.1:5432.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IQ_SERVICE:-$here/../../target/debug/iq-service}
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
create_database iq_capacity_bench
cat > "$work/flush.sql" <<'SQL'
\set seq random(1, 9000000000000000)
SELECT quota_report(:client_id, interval '20 seconds', :seq, now(),
  ARRAY['k' || :client_id, 'k' || :client_id], ARRAY['day', 'minute'],
  ARRAY[date_trunc('day', now()), date_trunc('minute', now())], ARRAY[1000, 1000]::bigint[], ARRAY[0, 0]::bigint[],
  (SELECT array_agg('req_' || md5(g::text || :seq)) FROM generate_series(1, 1000) g),
  array_fill('k' || :client_id, ARRAY[1000]), array_fill('index_daily'::text, ARRAY[1000]),
  array_fill(0, ARRAY[1000]), array_fill(100, ARRAY[1000]), array_fill(350::bigint, ARRAY[1000]),
  array_fill(now(), ARRAY[1000]));
SQL
cat > "$work/lease.sql" <<'SQL'
\set k random(1, 10000)
SELECT * FROM quota_lease_held(:client_id, interval '20 seconds',
  ARRAY['acct:' || :k, 'acct:' || :k, 'k' || :k, 'k' || :k], ARRAY['day', 'minute', 'day', 'minute'],
  ARRAY[date_trunc('day', now()), date_trunc('minute', now()), date_trunc('day', now()), date_trunc('minute', now())],
  ARRAY[10, 10, 10, 10]::bigint[], ARRAY[1000000000, 1000000000, 1000000000, 1000000000]::bigint[],
  ARRAY[0, 0, 0, 0]::bigint[], ARRAY[1000, 1000, 1000, 1000]::bigint[]);
SQL
for f in flush lease; do
  tps=$(pgbench_tps "$f" "${CLIENTS:-8}" 10)
  if [ "$f" = flush ]; then
    echo "flush  $tps statements/s  = $(awk "BEGIN{printf \"%d\", $tps * 1000}") call-log rows/s"
  else
    echo "lease  $tps statements/s"
  fi
done
