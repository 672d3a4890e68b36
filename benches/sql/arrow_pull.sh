#!/usr/bin/env bash
# A bulk pull of about 1,000,000 quote rows into a pandas DataFrame with the Python
# client (issue 51, D29): the Arrow path against the JSON path, in the same run.
#
#   benches/sql/arrow_pull.sh     # needs psql, python3, curl and an iq-service binary
#
# On a fresh database it loads ROWS quotes (quotes.py), starts the service, makes a
# professional member's key, and in each of ROUNDS rounds runs, each in a Python process
# of its own, `Client(...).query("index_quote", end_date=..., page_size=5000)`:
#   json:      the client installed without pyarrow (`pip install iq-client`): pages
#              asked as JSON and parsed row by row, the frame's text in pandas' own
#              strings. What `iq-client[arrow]` is measured against.
#   arrow:     the client installed with pyarrow (`iq-client[arrow]`): pages asked as
#              Arrow streams;
#   json+pa:   the second interpreter (pyarrow installed) with the client's Arrow path
#              switched off (`iq_client.arrow.available` False): JSON pages, and the
#              frame's text in the Arrow-backed strings pandas 3 makes when it finds
#              pyarrow. Reported, to show what pyarrow alone changes.
# the order rotating between rounds, each pull on an end_date of its own (the same
# rows, pages no cache has seen). For each pull: wall time from the call to the frame,
# the process's peak resident memory (and how much of it the pull added to what the
# interpreter, pandas and the client hold before it), and the service's CPU time (user +
# system, from /proc) divided by the pages, and the frame's own size (pandas'
# `memory_usage(deep=True)`). The frames of a round must be equal (a hash
# of every cell, and the dtypes' names; pandas picks the strings' storage by what is
# installed). It prints each pull, then the medians and the ratios the issue's goals are
# read from: json/arrow time (at least 3), arrow/json memory (at most 0.5: the pull's
# own, and the process's peak, are both printed), arrow/json service CPU per page (at
# most 1); and the same against json+pa.
#
# Settings (environment): IQ_SERVICE (default target/release/iq-service, else debug),
# PGURL, ROWS (1000000), ROUNDS (3), WORKERS (2), IQ_PYTHON (an interpreter with
# `clients/python[arrow]` installed; default target/python-venv's, else a venv made
# here), IQ_PYTHON_JSON (one with `clients/python` and no pyarrow; default a venv made
# here).
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
python_json=${IQ_PYTHON_JSON:-}
if [[ -z $python_json ]]; then
  python3 -m venv "$work/venv-json"
  "$work/venv-json/bin/pip" install --quiet --disable-pip-version-check "$repo/clients/python"
  python_json=$work/venv-json/bin/python
fi
if "$python_json" -c 'import pyarrow' 2>/dev/null; then
  echo "$python_json has pyarrow: the JSON path must run without it" >&2
  exit 1
fi
echo "client without pyarrow: $("$python_json" -c 'import iq_client, pandas; print("iq-client", iq_client.__version__, "pandas", pandas.__version__)')"

load_quotes "$rows"
serve
key=$(pro_key "arrow pull" raise)

# One pull in a process of its own: PATH END_DATE -> one JSON line.
cat >"$work/pull.py" <<'PY'
import json, resource, sys, time
import pandas as pd
import iq_client
path, port, key, end = sys.argv[1:5]
if path == "json+pa":
    iq_client.arrow.available = lambda: False
client = iq_client.Client(key, base_url=f"http://127.0.0.1:{port}", timeout=120)
# What the process holds before the pull: the interpreter, pandas (which loads pyarrow
# itself from pandas 3 on, where it is installed) and the client.
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
                  "frame_mib": frame.memory_usage(deep=True).sum() / 2**20,
                  "wire": iq_client._core.wire_for("frame")}))
PY

"$python" - "$python" "$python_json" "$work/pull.py" "$port" "$key" "$end_date" "${ROUNDS:-3}" "$service_pid" <<'PY'
import datetime, json, os, statistics, subprocess, sys
python, python_json, script, port, key, end_date, rounds, pid = sys.argv[1:9]
tick = os.sysconf("SC_CLK_TCK")
PATHS = ["json", "arrow", "json+pa"]
WIRES = {"json": "json", "arrow": "arrow", "json+pa": "json"}
def service_cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick  # utime + stime
def pull(path, end):
    before = service_cpu()
    interpreter = python_json if path == "json" else python
    out = subprocess.run([interpreter, script, path, port, key, end], check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["server_ms_per_page"] = (service_cpu() - before) * 1000 / result["pages"]
    return result
last = datetime.datetime.strptime(end_date, "%Y%m%d").date()
results = {path: [] for path in PATHS}
for r in range(int(rounds)):
    order = PATHS[r % 3:] + PATHS[:r % 3]
    pulls = {}
    for i, path in enumerate(order):
        end = (last + datetime.timedelta(days=3 * r + i)).strftime("%Y%m%d")
        pulls[path] = p = pull(path, end)
        print(f"round {r + 1} {path:7} (end_date {end}): {p['seconds']:6.2f} s, peak "
              f"{p['peak_mib']:4.0f} MiB ({p['growth_mib']:+4.0f} MiB in the pull), service "
              f"{p['server_ms_per_page']:5.2f} ms CPU a page, {p['rows']} rows in {p['pages']} pages, "
              f"the frame {p['frame_mib']:.0f} MiB")
    seen = {(p["rows"], p["cells"], tuple(p["dtypes"])) for p in pulls.values()}
    if len(seen) != 1:
        sys.exit(f"round {r + 1}: the frames differ: {pulls}")
    for path, p in pulls.items():
        if p["wire"] != WIRES[path]:
            sys.exit(f"the {path} path ran as {p['wire']}")
        results[path].append(p)
med = {path: {k: statistics.median(x[k] for x in runs)
              for k in ("seconds", "peak_mib", "growth_mib", "server_ms_per_page")}
       for path, runs in results.items()}
for path in PATHS:
    m = med[path]
    print(f"median of {rounds}, {path:7}: {m['seconds']:.2f} s, peak {m['peak_mib']:.0f} MiB "
          f"({m['growth_mib']:+.0f} in the pull), {m['server_ms_per_page']:.2f} ms a page")
a = med["arrow"]
for against, goals in (("json", True), ("json+pa", False)):
    j = med[against]
    print(f"against {against}: {against}/arrow time {j['seconds'] / a['seconds']:.2f}"
          f"{' (goal >= 3)' if goals else ''}; arrow/{against} memory, the pull's own "
          f"{a['growth_mib'] / j['growth_mib']:.2f}{' (goal <= 0.5)' if goals else ''}, the "
          f"process's peak {a['peak_mib'] / j['peak_mib']:.2f}; arrow/{against} service CPU a "
          f"page {a['server_ms_per_page'] / j['server_ms_per_page']:.2f}"
          f"{' (goal <= 1)' if goals else ''}")
print("frames equal")
PY
