#!/usr/bin/env bash
# A bulk pull of about 1,000,000 quote rows into a pandas DataFrame with the Python
# client (issue 51, D29): the Arrow path against the JSON path, in the same run.
#
#   benches/sql/arrow_pull.sh     # needs psql, python3, curl and an iq-service binary
#
# On a fresh database it loads ROWS quotes (quotes.py), starts the service, makes a
# professional member's key, and in each of ROUNDS rounds runs, each in a Python process
# of its own, `Client(...).query("index_quote", end_date=..., page_size=5000)`:
#   json:  with the client's Arrow path switched off (`iq_client.arrow.available` False:
#          pages asked as JSON and parsed row by row, as without pyarrow);
#   arrow: as installed with pyarrow (pages asked as Arrow streams);
# the order alternating between rounds, each pull on an end_date of its own (the same
# rows, pages no cache has seen). For each pull: wall time from the call to the frame,
# the process's peak resident memory (and how much of it the pull added to what the
# interpreter, pandas and the client hold before it), and the service's CPU time (user +
# system, from /proc) divided by the pages. The two frames of a round must be equal (a hash of every
# cell and the dtypes, outside the timing). It prints each pull, then the medians and
# the ratios the issue's goals are read from: json/arrow time (at least 3), arrow/json
# peak memory (at most 0.5), arrow/json service CPU per page (at most 1).
#
# Settings (environment): IQ_SERVICE (default target/release/iq-service, else debug),
# PGURL, ROWS (1000000), ROUNDS (3), WORKERS (2), IQ_PYTHON (an interpreter with
# `clients/python[arrow]` installed; default target/python-venv's, else a venv made here).
#
# It must never touch a database other than the one it creates; everything it starts is
# removed when it exits.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$here/../..
bin=${IQ_SERVICE:-$repo/target/release/iq-service}
[[ -x $bin ]] || bin=$repo/target/debug/iq-service
rows=${ROWS:-1000000}
# shellcheck source=benches/sql/database.sh
source "$here/database.sh"
# shellcheck source=benches/sql/service.sh
source "$here/service.sh"
create_database "iq_arrow_pull_bench_$$"
echo "binary: $bin"

python=${IQ_PYTHON:-$repo/target/python-venv/bin/python}
if ! "$python" -c 'import iq_client, pyarrow' 2>/dev/null; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check "$repo/clients/python[arrow]"
  python=$work/venv/bin/python
fi
echo "client: $("$python" -c 'import iq_client, pandas, pyarrow; print("iq-client", iq_client.__version__, "pandas", pandas.__version__, "pyarrow", pyarrow.__version__)')"

load_quotes "$rows"
serve
key=$(pro_key "arrow pull" raise)

# One pull in a process of its own: PATH END_DATE -> one JSON line.
cat >"$work/pull.py" <<'PY'
import json, resource, sys, time
import pandas as pd
import iq_client
path, port, key, end = sys.argv[1:5]
if path == "json":
    iq_client.arrow.available = lambda: False
client = iq_client.Client(key, base_url=f"http://127.0.0.1:{port}", timeout=120)
# What the process holds before the pull: the interpreter, pandas (which loads pyarrow
# itself from pandas 3 on) and the client.
before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
frame = client.query("index_quote", end_date=end, page_size=5000, fixed_end_date=False)
seconds = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cells = int(pd.util.hash_pandas_object(frame, index=False).sum() % (1 << 62))
print(json.dumps({"seconds": seconds, "peak_mib": peak_kib / 1024,
                  "growth_mib": (peak_kib - before_kib) / 1024, "rows": len(frame),
                  "pages": len(frame.attrs["request_ids"]), "cells": cells,
                  "dtypes": [str(t) for t in frame.dtypes],
                  "wire": iq_client._core.wire_for("frame")}))
PY

"$python" - "$python" "$work/pull.py" "$port" "$key" "$end_date" "${ROUNDS:-3}" "$service_pid" <<'PY'
import datetime, json, os, statistics, subprocess, sys
python, script, port, key, end_date, rounds, pid = sys.argv[1:8]
tick = os.sysconf("SC_CLK_TCK")
def service_cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick  # utime + stime
def pull(path, end):
    before = service_cpu()
    out = subprocess.run([python, script, path, port, key, end], check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["server_ms_per_page"] = (service_cpu() - before) * 1000 / result["pages"]
    return result
last = datetime.datetime.strptime(end_date, "%Y%m%d").date()
results = {"json": [], "arrow": []}
for r in range(int(rounds)):
    order = ["json", "arrow"] if r % 2 == 0 else ["arrow", "json"]
    pair = {}
    for i, path in enumerate(order):
        end = (last + datetime.timedelta(days=2 * r + i)).strftime("%Y%m%d")
        pair[path] = pull(path, end)
        p = pair[path]
        print(f"round {r + 1} {path:5} (end_date {end}): {p['seconds']:6.2f} s, peak "
              f"{p['peak_mib']:4.0f} MiB ({p['growth_mib']:+4.0f} MiB in the pull), service "
              f"{p['server_ms_per_page']:5.2f} ms CPU a page, {p['rows']} rows in {p['pages']} pages")
    a, j = pair["arrow"], pair["json"]
    if (a["rows"], a["cells"], a["dtypes"]) != (j["rows"], j["cells"], j["dtypes"]):
        sys.exit(f"round {r + 1}: the Arrow frame differs from the JSON frame: {a} vs {j}")
    if (a["wire"], j["wire"]) != ("arrow", "json"):
        sys.exit(f"the paths did not run as named: {a['wire']} and {j['wire']}")
    for path in pair:
        results[path].append(pair[path])
med = {path: {k: statistics.median(x[k] for x in runs)
              for k in ("seconds", "peak_mib", "growth_mib", "server_ms_per_page")}
       for path, runs in results.items()}
j, a = med["json"], med["arrow"]
print(f"median of {rounds}: json {j['seconds']:.2f} s, peak {j['peak_mib']:.0f} MiB "
      f"({j['growth_mib']:+.0f} in the pull), {j['server_ms_per_page']:.2f} ms a page; arrow "
      f"{a['seconds']:.2f} s, peak {a['peak_mib']:.0f} MiB ({a['growth_mib']:+.0f} in the pull), "
      f"{a['server_ms_per_page']:.2f} ms a page")
print(f"json/arrow time {j['seconds'] / a['seconds']:.2f} (goal >= 3); arrow/json peak memory "
      f"{a['peak_mib'] / j['peak_mib']:.2f}, of the pull's own {a['growth_mib'] / j['growth_mib']:.2f} "
      f"(goal <= 0.5); arrow/json service CPU a page "
      f"{a['server_ms_per_page'] / j['server_ms_per_page']:.2f} (goal <= 1); frames equal")
PY
