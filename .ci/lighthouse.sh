#!/usr/bin/env bash
# Lighthouse gate for the website: runs Lighthouse (npm lighthouse@12.2.3, Debian's
# Chromium, the default phone profile) on the home page, an index page, the methodology,
# the Tushare guide in English and in Chinese, and /docs of a freshly started service, and fails when any of
# performance, accessibility, best practices or SEO scores below 95 on any of them.
#
# Usage: .ci/lighthouse.sh [path/to/iq-service]   (default: target/debug/iq-service)
# Reports: target/lighthouse/<page>.report.json, the service's log in
# target/lighthouse/service.log. Takes about 1.5 minutes on a 2-core machine, 2.5 when a
# page needs its three performance runs (see below).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-target/debug/iq-service}
out=target/lighthouse
threshold=95
# Page name (used for the report's file name) and path, one pair per page.
pages=(
  "home /"
  "index /indexes/GPU_Index"
  "methodology /methodology"
  "tushare-guide /tushare-guide"
  "tushare-guide-zh /zh-CN/tushare-guide"
  "examples /examples"
  "docs /docs"
)

[ -x "$binary" ] || { echo "lighthouse: no service binary at $binary (build it first)" >&2; exit 1; }
[ -x /usr/bin/chromium ] || { echo "lighthouse: /usr/bin/chromium is missing (apt-get install chromium)" >&2; exit 1; }
mkdir -p "$out"

# Lighthouse lives in a folder of its own under target/ (ignored by git), installed once
# and reused: a pinned version so scores do not move with a new release (13 wants Node 22
# anyway). It is an npm package without a browser of its own: CHROME_PATH below points it
# at Debian's Chromium, since this machine cannot download a browser build.
lighthouse=$out/node_modules/.bin/lighthouse
if [ ! -x "$lighthouse" ] || ! grep -q '"version": "12.2.3"' "$out/node_modules/lighthouse/package.json" 2>/dev/null; then
  echo "lighthouse: installing lighthouse@12.2.3 into $out"
  npm install --prefix "$out" --no-audit --no-fund --loglevel=error --save-exact lighthouse@12.2.3 >/dev/null
fi
export CHROME_PATH=/usr/bin/chromium

# A port that is free right now, from the kernel (bind to port 0), so the check never
# collides with a service or a test server already running on this machine.
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
base=http://127.0.0.1:$port

# A throwaway data folder: with no DATABASE_URL the service starts its own embedded
# PostgreSQL there with the demo data, so every run scores the same pages from a clean
# start. Under /tmp, since as root the cluster runs as the postgres user, which must be
# able to reach the folder.
data=$(mktemp -d /tmp/iq-lighthouse.XXXXXX)
pid=""

# Always stop what this script started, on success, failure or interrupt: the service
# first (SIGTERM lets it stop its embedded cluster itself; SIGKILL after a deadline), then
# the cluster should the service have died without stopping it, then the data folder.
cleanup() {
  local status=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  if [ -f "$data/pg/postmaster.pid" ]; then
    local pg_ctl
    pg_ctl=$(ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$pg_ctl" ]; then
      if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$pg_ctl" stop -D "$data/pg" -m immediate >/dev/null 2>&1 || true
      else
        "$pg_ctl" stop -D "$data/pg" -m immediate >/dev/null 2>&1 || true
      fi
    fi
  fi
  rm -rf "$data"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Start the service as production would run it, on the free port; JSON logs to a file
# (read when it fails to come up). METRICS_ADDR=api: no second listener to collide on.
started=$(date +%s)
env -u DATABASE_URL \
  IQ_DATA_DIR="$data" LISTEN_ADDR="127.0.0.1:$port" METRICS_ADDR=api LOG_FORMAT=json \
  "$binary" >"$out/service.log" 2>&1 &
pid=$!

# Wait for readiness (/readyz 200: database reachable and migrated, demo data in), not a
# fixed sleep: creating the cluster takes from seconds to a minute on a loaded machine.
deadline=$((SECONDS + 120))
until curl -fsS -o /dev/null --max-time 2 "$base/readyz" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "lighthouse: the service exited before it was ready; its log:" >&2
    tail -n 30 "$out/service.log" >&2
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "lighthouse: the service was not ready within 120 s; its log:" >&2
    tail -n 30 "$out/service.log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "lighthouse: service ready on $base after $(($(date +%s) - started)) s"

# Chromium's flags: headless without sandbox (root in a container), no GPU, /tmp instead
# of a small /dev/shm, and none of Chromium's own background connections (update checks,
# sync, first-run fetches): this machine's network is closed and those refused connections
# would otherwise land in the page's console and network log.
chrome_flags="--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-background-networking --disable-component-update --disable-sync --no-first-run"

# One Lighthouse run per page, one after the other (parallel runs on 2 cores would skew
# the performance score). Mobile is Lighthouse's default form factor, so no preset.
# Accessibility, best practices and SEO come out the same on every run; performance moves
# with the machine's load (a long task on a busy core counts four times over under the
# phone profile's CPU throttling), so a page whose performance is below the threshold is
# run again, up to 3 runs, and its best run is kept: Lighthouse CI's "optimistic"
# aggregation. A page that is really slow fails all three.
perf_score() {
  node -e 'const l=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));
    const s=l.categories?.performance?.score; console.log(s==null?-1:Math.round(s*100))' "$1"
}
reports=()
for entry in "${pages[@]}"; do
  name=${entry%% *}
  path=${entry#* }
  report=$out/$name.report.json
  run=$out/$name.run.json
  rm -f "$report"
  best=-2
  for attempt in 1 2 3; do
    if ! "$lighthouse" "$base$path" \
        --quiet \
        --only-categories=performance,accessibility,best-practices,seo \
        --chrome-flags="$chrome_flags" \
        --max-wait-for-load=30000 \
        --output=json --output-path="$run" >"$out/$name.lighthouse.log" 2>&1; then
      # Lighthouse itself sometimes fails to record a page load's trace on a busy
      # machine (NO_NAVSTART, NO_FCP): that says nothing about the page, so it counts as
      # one of the three runs; only a page on which every run fails stops the check.
      echo "lighthouse: run $attempt on $path failed; its log:" >&2
      tail -n 5 "$out/$name.lighthouse.log" >&2
      if [ "$attempt" -eq 3 ] && [ "$best" -lt -1 ]; then
        echo "lighthouse: every run on $path failed" >&2
        exit 1
      fi
      continue
    fi
    perf=$(perf_score "$run")
    if [ "$perf" -gt "$best" ]; then best=$perf; mv "$run" "$report"; else rm -f "$run"; fi
    if [ "$best" -ge "$threshold" ] || [ "$attempt" -eq 3 ]; then break; fi
    echo "lighthouse: $path performance $perf on run $attempt, running it again"
  done
  reports+=("$path=$report")
done

# Read the reports: one line of scores per page, then for every category below the
# threshold the audits that cost it the most points (an audit's cost is its weight's share
# of the category times what it missed), so a failure says what to fix without opening
# the JSON. Exits 1 when any score is below the threshold.
node - "$threshold" "${reports[@]}" <<'JS'
const fs = require("fs");
const [threshold, ...reports] = process.argv.slice(2);
const order = ["performance", "accessibility", "best-practices", "seo"];
let failed = false;
const details = [];
for (const entry of reports) {
  const at = entry.indexOf("=");
  const page = entry.slice(0, at), file = entry.slice(at + 1);
  const lhr = JSON.parse(fs.readFileSync(file, "utf8"));
  if (lhr.runtimeError) {
    console.log(`${page}: runtime error ${lhr.runtimeError.code}: ${lhr.runtimeError.message}`);
    failed = true;
    continue;
  }
  const scores = order.map((id) => {
    const s = lhr.categories[id]?.score;
    return s == null ? null : Math.round(s * 100);
  });
  console.log(
    `${page.padEnd(20)} ` +
      order.map((id, i) => `${id} ${scores[i] ?? "n/a"}`).join("  ") +
      `  (${file})`,
  );
  order.forEach((id, i) => {
    if (scores[i] != null && scores[i] >= Number(threshold)) return;
    failed = true;
    const cat = lhr.categories[id];
    const total = cat.auditRefs.reduce((sum, r) => sum + r.weight, 0) || 1;
    const costly = cat.auditRefs
      .map((r) => ({ r, a: lhr.audits[r.id] }))
      .filter(({ r, a }) => r.weight > 0 && a.score != null && a.score < 1)
      .map(({ r, a }) => ({ a, cost: (100 * r.weight * (1 - a.score)) / total }))
      .sort((x, y) => y.cost - x.cost)
      .slice(0, 5);
    const lines = costly.map(({ a, cost }) => {
      const value = a.displayValue ? ` (${a.displayValue})` : "";
      const items = (a.details?.items || [])
        .map((it) => it.node?.selector || it.url || it.source?.url || it.description)
        .filter(Boolean)
        .slice(0, 3);
      const where = items.length ? `: ${items.join(", ")}` : "";
      return `    -${cost.toFixed(1)} ${a.id}${value}${where}`;
    });
    // Performance's weighted audits are its metrics: name the diagnostics behind them too
    // (DOM size, main-thread work by kind, render-blocking resources, ...).
    if (id === "performance") {
      const diagnostics = cat.auditRefs
        .filter((r) => r.weight === 0 && r.group !== "metrics")
        .map((r) => lhr.audits[r.id])
        .filter((a) => a && a.score != null && a.score < 0.9 && a.scoreDisplayMode !== "informative")
        .sort((x, y) => x.score - y.score)
        .slice(0, 5)
        .map((a) => {
          let extra = "";
          if (a.id === "mainthread-work-breakdown") {
            extra = ": " + (a.details?.items || []).slice(0, 3)
              .map((i) => `${i.groupLabel || i.group} ${Math.round(i.duration)} ms`).join(", ");
          }
          return `    diagnostic ${a.id}${a.displayValue ? ` (${a.displayValue})` : ""}${extra}`;
        });
      lines.push(...diagnostics);
    }
    details.push(`${page}: ${id} ${scores[i] ?? "n/a"} < ${threshold}; the audits that cost the most:`, ...lines);
  });
}
if (details.length) console.log(details.join("\n"));
process.exit(failed ? 1 : 0);
JS
