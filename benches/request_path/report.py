#!/usr/bin/env python3
"""The tables of benches/request_path.sh, from the records it collected.

    report.py RESULTS

RESULTS has one record a line, a kind then key=value fields:

    run round=R shape=key|visitor|healthz|tushare target=service|traced|sampled|base|nginx rps=...
        p99_us=... status_errors=... socket_errors=... process_us=... system_us=...
        postgres_us=... load_us=... machine_us=... idle_share=... busiest_share=...
    paced target=service|base|nginx target_rps=... rps=... p50_us=... p99_us=... ...
    sink batches=N bytes=B
    instructions build=service|service_tushare|traced|sampled|base|base_traced|base_sampled
        requests=N
        total=I
    meta name=value ...

`base` is the second build of BASE_BIN, when the script was given one: a table then
sets this build beside it.

Ratios are taken within a round (the runs of a round are back to back, so slow drifts
of a shared machine fall on both sides) and the median over the rounds is reported.
"""

import statistics
import sys

SHAPES = [
    ("key", "cached key query"),
    ("tushare", "cached /tushare call"),
    ("visitor", "visitor query"),
    ("healthz", "GET /healthz"),
]


def read(path):
    records = []
    with open(path) as f:
        for line in f:
            kind, *fields = line.split()
            record = {"kind": kind}
            for field in fields:
                name, _, value = field.partition("=")
                try:
                    record[name] = float(value)
                except ValueError:
                    record[name] = value
            records.append(record)
    return records


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec=".2f", none="-"):
    return none if value is None else format(value, spec)


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
    print(line(header))
    print(line(["-" * w for w in widths]))
    for r in rows:
        print(line(r))


def main(path):
    records = read(path)
    runs = [r for r in records if r["kind"] == "run"]
    meta = {k: v for r in records if r["kind"] == "meta" for k, v in r.items()}
    rounds = sorted({int(r["round"]) for r in runs})

    def run(rnd, shape, target):
        for r in runs:
            if int(r["round"]) == rnd and r["shape"] == shape and r["target"] == target:
                return r
        return None

    def ratios(shape, target, base):
        out = []
        for rnd in rounds:
            a, b = run(rnd, shape, target), run(rnd, shape, base)
            if a and b and b["rps"]:
                out.append(a["rps"] / b["rps"])
        return out

    def figure(shape, target, name):
        return median(
            [run(rnd, shape, target)[name] for rnd in rounds if run(rnd, shape, target)]
        )

    # Requests per second, every run.
    print("\nRequests per second (wrk -t{} -c{}, {} s a run; p99 in ms):".format(
        int(meta.get("threads", 0)), int(meta.get("clients", 0)),
        int(meta.get("secs", 0))))
    rows = []
    for rnd in rounds:
        for shape, label in SHAPES:
            s, n, t = run(rnd, shape, "service"), run(rnd, shape, "nginx"), run(rnd, shape, "traced")
            sampled = run(rnd, shape, "sampled")
            rows.append([
                rnd, label,
                fmt(s and s["rps"], ".0f"), fmt(s and s["p99_us"] / 1000),
                fmt(n and n["rps"], ".0f"), fmt(n and n["p99_us"] / 1000),
                fmt(s and n and s["rps"] / n["rps"], ".3f"),
                fmt(t and t["rps"], ".0f"),
                fmt(t and s and t["rps"] / s["rps"], ".3f"),
                fmt(sampled and s and sampled["rps"] / s["rps"], ".3f"),
            ])
    table(["round", "request", "service", "p99", "nginx", "p99", "service/nginx",
           "traced", "traced/service", "sampled/service"], rows)

    # CPU per request, every shape (median over the rounds).
    print("\nCPU per request (median over the rounds; busiest thread of the service):")
    rows = []
    for shape, label in SHAPES:
        rows.append([
            label,
            fmt(figure(shape, "service", "process_us"), ".1f"),
            fmt(figure(shape, "service", "busiest_us"), ".1f"),
            fmt(figure(shape, "service", "busiest_share"), ".3f"),
            next((r["busiest_name"] for r in runs
                  if r["shape"] == shape and r["target"] == "service"), "-"),
            fmt(figure(shape, "nginx", "process_us"), ".1f"),
        ])
    table(["request", "service us", "busiest thread us", "busiest share", "busiest thread",
           "nginx us"], rows)
    print("  threads with >= 5% of the service's CPU (name[thread id]:share):")
    for shape, label in SHAPES:
        for r in runs:
            if r["shape"] == shape and r["target"] == "service":
                print(f"    round {int(r['round'])}, {label}: "
                      f"{str(r.get('threads')).replace(',', ', ')}")

    machine_budget(runs, figure)

    # Problems that make a figure meaningless.
    errors = [r for r in records if r.get("status_errors", 0) or r.get("socket_errors", 0)]
    for r in errors:
        print(f"\nWARNING: {r.get('target', r['kind'])} {r.get('shape', '')} round "
              f"{r.get('round', '-')}: {int(r['status_errors'])} non-2xx answers, "
              f"{int(r['socket_errors'])} socket errors: its figures do not measure "
              "the request path")

    def paced_median(target):
        """The paced run of `target` with the median p99, and every run's p99 in ms."""
        found = sorted((r for r in records if r["kind"] == "paced" and r["target"] == target),
                       key=lambda r: r["p99_us"])
        if not found:
            return None, []
        return found[(len(found) - 1) // 2], [r["p99_us"] / 1000 for r in found]

    paced, paced_all = paced_median("service")
    paced_nginx, _ = paced_median("nginx")
    sink = next((r for r in records if r["kind"] == "sink"), None)
    if sink:
        print(f"\nOTLP sink: {int(sink['batches'])} export requests received "
              f"({sink['bytes'] / 1e6:.1f} MB) during the traced runs")
        if not sink["batches"]:
            print("WARNING: the traced instance exported nothing; the tracing ratio "
                  "does not measure export")
    dropped = sum(r.get("drop_warnings", 0) for r in runs
                  if r["target"] in ("traced", "sampled"))
    if dropped:
        print(f"WARNING: the traced instance logged {int(dropped)} lines about dropped "
              "spans (queue full): it exported less than every request's spans")

    # The figures against its goals.
    key_ratio = median(ratios("key", "service", "nginx"))
    visitor_ratio = median(ratios("visitor", "service", "nginx"))
    health_ratio = median(ratios("healthz", "service", "nginx"))
    cpu = figure("key", "service", "process_us")
    share = figure("key", "service", "busiest_share")
    workers = int(meta.get("workers", 0))

    def verdict(value, ok, acceptable=None):
        if value is None:
            return "-"
        if ok(value):
            return "PASS"
        if acceptable and acceptable(value):
            return "ACCEPTABLE"
        return "BELOW GOAL"

    rows = [
        ["cached key query / nginx", fmt(key_ratio, ".3f"), ">= 0.7 (acceptable >= 0.5)",
         verdict(key_ratio, lambda v: v >= 0.7, lambda v: v >= 0.5)],
        ["visitor query / nginx", fmt(visitor_ratio, ".3f"), "(reported)", ""],
        ["/healthz / nginx", fmt(health_ratio, ".3f"), "(reported)", ""],
        ["CPU us per cached key request", fmt(cpu, ".1f"), "<= 25",
         verdict(cpu, lambda v: v <= 25)],
        [f"busiest thread share ({workers} workers)", fmt(share, ".3f"), "<= 0.333",
         verdict(share, lambda v: v <= 1 / 3 + 1e-9)],
    ]
    if paced:
        rows.append([
            f"p99 at half max ({paced['rps']:.0f} of {paced['max_rps']:.0f} rps)",
            f"{paced['p99_us'] / 1000:.2f} ms", "<= 2 ms",
            verdict(paced["p99_us"], lambda v: v <= 2000),
        ])
        if len(paced_all) > 1:
            rows.append([f"  median of {len(paced_all)} runs", " ".join(
                f"{v:.2f}" for v in paced_all), "(ms, each run)", ""])
    if paced_nginx:
        rows.append([
            f"  nginx at that rate ({paced_nginx['rps']:.0f} rps)",
            f"{paced_nginx['p99_us'] / 1000:.2f} ms", "(the machine's own)", "",
        ])
    # Steadier than the throughput ratio on a shared machine: CPU per request does not
    # move with what else runs (much).
    sampled = sampled_label(meta)
    for traced, label in (("traced", "every request"), ("sampled", sampled)):
        ratio = median(ratios("key", traced, "service"))
        rows.append([f"tracing on ({label}) / off (cached key)", fmt(ratio, ".3f"),
                     ">= 0.9", verdict(ratio, lambda v: v >= 0.9)])
        cpu_ratio = median([
            run(rnd, "key", traced)["process_us"] / run(rnd, "key", "service")["process_us"]
            for rnd in rounds if run(rnd, "key", traced) and run(rnd, "key", "service")
        ])
        rows.append(["  CPU per request, on / off", fmt(cpu_ratio, ".3f"), "(reported)", ""])
    # Tushare's wire (issue 48): the same call, cached, as CPU per request against the
    # key query's in the same round.
    tushare_cpu = median([
        run(rnd, "tushare", "service")["process_us"] / run(rnd, "key", "service")["process_us"]
        for rnd in rounds if run(rnd, "tushare", "service") and run(rnd, "key", "service")
    ])
    if tushare_cpu is not None:
        rows.append(["CPU per request, /tushare / /api/v1/query (cached)",
                     fmt(tushare_cpu, ".3f"), "<= 1.05 (issue 48)",
                     verdict(tushare_cpu, lambda v: v <= 1.05)])
    counted = instructions(records, "service")
    on_tushare = instructions(records, "service_tushare")
    if counted and on_tushare:
        rows.append(["  instructions, /tushare / /api/v1/query", f"{on_tushare / counted:.3f}",
                     "<= 1.05 (issue 48)", verdict(on_tushare / counted, lambda v: v <= 1.05)])
    if counted:
        rows.append([
            "instructions per cached key request", f"{counted / 1000:.1f}k",
            "(to compare builds)", "",
        ])
    print("\nSummary (medians over {} rounds):".format(len(rounds)))
    table(["figure", "measured", "goal (issue 14)", "verdict"], rows)
    for p in (r for r in records if r["kind"] == "paced"):
        if abs(p["rps"] / p["target_rps"] - 1) > 0.1:
            print(f"NOTE: the paced run on {p['target']} reached {p['rps']:.0f} rps, not "
                  f"the {p['target_rps']:.0f} asked for: its p99 is for that rate")
    if any(r["target"] == "base" for r in runs):
        against_base(records, meta, rounds, run, ratios, figure, paced_median)


def machine_budget(runs, figure):
    """Where the two cores' time goes per saturated request: the server's own user and
    kernel time, PostgreSQL's (the call log and quota writes of a key query), wrk's
    (which shares the cores it measures) and the rest (for the traced instance, the
    OTLP sink's nginx among it); and, for the cached key query,
    how far the ratio to nginx could go if the service's own user-space code cost
    nothing, the rest unchanged."""
    if not any("machine_us" in r for r in runs):
        return
    print("\nThe machine's CPU per saturated request, us (medians over the rounds):")
    targets = [t for t in ("service", "traced", "sampled", "base", "nginx")
               if any(r["target"] == t for r in runs)]
    rows, machine = [], {}
    for shape, label in SHAPES:
        for target in targets:
            get = lambda name: figure(shape, target, name)
            process, system = get("process_us"), get("system_us")
            postgres, load, busy = get("postgres_us"), get("load_us"), get("machine_us")
            if None in (process, system, postgres, busy):
                continue
            machine[(shape, target)] = (busy, process - system)
            other = busy - process - postgres - (load or 0)
            rows.append([label, target, fmt(process - system, ".1f"), fmt(system, ".1f"),
                         fmt(postgres, ".1f"), fmt(load, ".1f"), fmt(other, ".1f"),
                         fmt(busy, ".1f"), fmt(get("idle_share"), ".2f")])
    table(["request", "server", "server user", "server kernel", "PostgreSQL", "wrk",
           "other", "machine", "idle share"], rows)
    if ("key", "service") in machine and ("key", "nginx") in machine:
        busy, user = machine[("key", "service")]
        floor, _ = machine[("key", "nginx")]
        print(f"  cached key query / nginx if the service's user-space code cost nothing: "
              f"{floor / (busy - user):.2f} (nginx's {floor:.1f} us against the "
              f"{busy - user:.1f} us the rest of a key request costs the machine)")
        print(f"  at 0.5, the service's user space would have {2 * floor - (busy - user):.1f} "
              f"us a request (it uses {user:.1f})")


def sampled_label(meta):
    """How the report names the instance that samples BENCH_TRACE_RATIO of the traces."""
    return f"1 in {1 / float(meta.get('trace_ratio', 0.1)):.0f} sampled"


def instructions(records, build):
    """Instructions per cached key request of `build`, or None when not counted (a
    record without `build` is from before there were two)."""
    counted = next((r for r in records if r["kind"] == "instructions"
                    and r.get("build", "service") == build), None)
    if counted and counted.get("requests") and isinstance(counted.get("total"), float):
        return counted["total"] / counted["requests"]
    return None


def against_base(records, meta, rounds, run, ratios, figure, paced_median):
    """This build beside the base build, run in the same rounds: ratios within each
    round, medians over the rounds."""
    print(f"\nThis build against the base build (medians over {len(rounds)} rounds):")
    print(f"  this: {meta.get('build', '-')}")
    print(f"  base: {meta.get('base', '-')}")
    rows = []
    for shape, label in SHAPES:
        this_cpu = figure(shape, "service", "process_us")
        base_cpu = figure(shape, "base", "process_us")
        rows.append([
            label,
            fmt(median(ratios(shape, "service", "base")), ".3f"),
            fmt(median(ratios(shape, "service", "nginx")), ".3f"),
            fmt(median(ratios(shape, "base", "nginx")), ".3f"),
            fmt(this_cpu, ".1f"), fmt(base_cpu, ".1f"),
            fmt(this_cpu and base_cpu and this_cpu / base_cpu, ".3f"),
        ])
    paced, _ = paced_median("service")
    paced_base, _ = paced_median("base")
    table(["request", "req/s this/base", "this/nginx", "base/nginx", "CPU us this",
           "CPU us base", "CPU this/base"], rows)
    if paced and paced_base:
        print(f"  p99 of the cached key query at {paced['target_rps']:.0f} req/s: "
              f"this {paced['p99_us'] / 1000:.2f} ms, base {paced_base['p99_us'] / 1000:.2f} ms")
    rows = []
    sampled = sampled_label(meta)
    for this_build, base_build, label in (("service", "base", "untraced"),
                                          ("traced", "base_traced", "every request traced"),
                                          ("sampled", "base_sampled", sampled)):
        this, base = instructions(records, this_build), instructions(records, base_build)
        if this and base:
            rows.append([label, f"{this / 1000:.1f}k", f"{base / 1000:.1f}k",
                         f"{this / base:.3f}"])
    if rows:
        print("  instructions per cached key request (callgrind, every thread of the "
              "process, the exporter's among them):")
        table(["", "this", "base", "this/base"], rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
