"""Median latency of whole pages through the service, datasets alternating (shared by the
scripts in benches/sql).

    python3 pages.py PORT KEY PAGE REQUESTS DATASET BASELINE

Asks POST /api/v1/query for the first PAGE rows of DATASET and of BASELINE, REQUESTS
times each, alternating on one keep-alive connection after five warm-up rounds, and
prints each median and DATASET / BASELINE. Every answer must hold exactly PAGE rows: a
shorter page would measure less work than the figure claims.
"""

import http.client
import json
import statistics
import sys
import time


def main(port, key, page, requests, dataset, baseline):
    page, requests = int(page), int(requests)
    conn = http.client.HTTPConnection("127.0.0.1", int(port))

    def ask(api_name):
        body = json.dumps({"api_name": api_name, "limit": page})
        start = time.perf_counter()
        conn.request("POST", "/api/v1/query", body,
                     {"Content-Type": "application/json", "X-API-Key": key})
        answer = json.loads(conn.getresponse().read())
        elapsed = time.perf_counter() - start
        assert answer["code"] == 0 and answer["data"]["returned"] == page, \
            f"{api_name}: {str(answer)[:400]}"
        return elapsed

    times = {baseline: [], dataset: []}
    for _ in range(5):  # warm-up: prepared statements, buffers
        for name in times:
            ask(name)
    for _ in range(requests):
        for name in times:
            times[name].append(ask(name))
    base_ms, data_ms = (statistics.median(times[n]) * 1000 for n in (baseline, dataset))
    print(f"service, {page} rows a page, median of {requests}: {baseline} {base_ms:.2f} ms, "
          f"{dataset} {data_ms:.2f} ms, ratio {data_ms / base_ms:.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
