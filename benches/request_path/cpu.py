#!/usr/bin/env python3
"""CPU time of processes and their threads, from /proc, for benches/request_path.sh.

    cpu.py snapshot PID [PID...] > before.json
    cpu.py report before.json after.json REQUESTS [LOAD_CPU_SECONDS]

`snapshot` records utime and stime (clock ticks) of each process (/proc/PID/stat, which
includes threads that have already exited) and of each of its threads
(/proc/PID/task/TID/stat), and of the machine: every PostgreSQL process's (by name, so
the database's share of a request is seen when it runs on this machine) and the busy
and idle time of all cores (/proc/stat). `report` prints, for the REQUESTS served
between the two snapshots, one line of key=value figures:

    process_us      CPU microseconds per request, all the processes together
    system_us       of which in the kernel (stime: the sockets, mostly)
    postgres_us     PostgreSQL's processes, per request
    load_us         the load generator's, per request (LOAD_CPU_SECONDS, measured by
                    the caller around it; absent when not given)
    machine_us      busy time of all cores per request: the above and everything else
    idle_share      the share of the cores' time left idle
    busiest_us      CPU microseconds per request of the busiest thread
    busiest_share   the busiest thread's share of the processes' CPU
    busiest_name    its name (comm, as the kernel truncates it to 15 characters) and
                    [thread id]: actix names every arbiter thread alike, and thread ids
                    follow the order of creation
    threads         the threads that used at least 5% of the CPU, as name[tid]:share,...

Only the standard library: it runs wherever the script runs.
"""

import json
import os
import sys

TICK_US = 1_000_000 / os.sysconf("SC_CLK_TCK")


def ticks(stat_path):
    """utime, stime and the name from a stat file; None if the task is gone."""
    try:
        with open(stat_path) as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The name is in parentheses and may itself hold spaces or parentheses: split
    # after the last ')'. Fields 14 and 15 (utime, stime) are then at 11 and 12.
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]), int(fields[12]), name


def postgres_ticks():
    """utime+stime of every process named postgres, by pid."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        seen = ticks(f"/proc/{pid}/stat")
        if seen is not None and seen[2] == "postgres":
            found[pid] = seen[0] + seen[1]
    return found


def cores():
    """Busy and idle clock ticks of all cores together (/proc/stat's first line)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...: idle and iowait are not busy.
    idle = values[3] + values[4]
    return sum(values[:8]) - idle, idle


def snapshot(pids):
    total, system, threads = 0, 0, {}
    for pid in pids:
        found = ticks(f"/proc/{pid}/stat")
        if found is None:
            sys.exit(f"cpu.py: no process {pid}")
        total += found[0] + found[1]
        system += found[1]
        for tid in os.listdir(f"/proc/{pid}/task"):
            found = ticks(f"/proc/{pid}/task/{tid}/stat")
            if found is not None:
                threads[f"{pid}/{tid}"] = (found[0] + found[1], found[2])
    busy, idle = cores()
    return {"total": total, "system": system, "threads": threads,
            "postgres": postgres_ticks(), "busy": busy, "idle": idle}


def report(before, after, requests, load_seconds=None):
    process = after["total"] - before["total"]
    used = {}
    for key, (t, name) in after["threads"].items():
        # A thread born between the snapshots started from zero.
        tid = key.split("/")[1]
        label = f"{name}[{tid}]".replace(" ", "_")
        used[key] = (t - before["threads"].get(key, (0, name))[0], label)
    busiest_tid = max(used, key=lambda tid: used[tid][0])
    busiest, name = used[busiest_tid]
    share = busiest / process if process else 0.0
    notable = sorted(
        (u for u in used.values() if process and u[0] / process >= 0.05), reverse=True
    )
    threads = ",".join(f"{n}:{t / process:.2f}" for t, n in notable)
    # A PostgreSQL process born between the snapshots started from zero; one that
    # ended took its time with it (the pool's connections live on).
    postgres = sum(t - before["postgres"].get(pid, 0) for pid, t in after["postgres"].items())
    busy = after["busy"] - before["busy"]
    idle = after["idle"] - before["idle"]
    per_request = lambda ticks: f"{ticks * TICK_US / requests:.2f}"
    load = "" if load_seconds is None else f"load_us={load_seconds * 1e6 / requests:.2f} "
    print(
        f"process_us={per_request(process)} "
        f"system_us={per_request(after['system'] - before['system'])} "
        f"postgres_us={per_request(postgres)} {load}"
        f"machine_us={per_request(busy)} idle_share={idle / max(busy + idle, 1):.3f} "
        f"busiest_us={per_request(busiest)} "
        f"busiest_share={share:.3f} busiest_name={name} "
        f"threads={threads or '-'}"
    )


def main(argv):
    if len(argv) >= 3 and argv[1] == "snapshot":
        json.dump(snapshot(argv[2:]), sys.stdout)
    elif len(argv) in (5, 6) and argv[1] == "report":
        load = float(argv[5]) if len(argv) == 6 else None
        with open(argv[2]) as b, open(argv[3]) as a:
            report(json.load(b), json.load(a), max(int(argv[4]), 1), load)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
