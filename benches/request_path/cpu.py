#!/usr/bin/env python3
"""CPU time of processes and their threads, from /proc, for benches/request_path.sh.

    cpu.py snapshot PID [PID...] > before.json
    cpu.py report before.json after.json REQUESTS

`snapshot` records utime+stime (clock ticks) of each process (/proc/PID/stat, which
includes threads that have already exited) and of each of its threads
(/proc/PID/task/TID/stat). `report` prints, for the REQUESTS served between the two
snapshots, one line of key=value figures:

    process_us      CPU microseconds per request, all the processes together
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
    """utime+stime and the name from a stat file; None if the task is gone."""
    try:
        with open(stat_path) as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The name is in parentheses and may itself hold spaces or parentheses: split
    # after the last ')'. Fields 14 and 15 (utime, stime) are then at 11 and 12.
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12]), name


def snapshot(pids):
    total, threads = 0, {}
    for pid in pids:
        found = ticks(f"/proc/{pid}/stat")
        if found is None:
            sys.exit(f"cpu.py: no process {pid}")
        total += found[0]
        for tid in os.listdir(f"/proc/{pid}/task"):
            found = ticks(f"/proc/{pid}/task/{tid}/stat")
            if found is not None:
                threads[f"{pid}/{tid}"] = found
    return {"total": total, "threads": threads}


def report(before, after, requests):
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
    print(
        f"process_us={process * TICK_US / requests:.2f} "
        f"busiest_us={busiest * TICK_US / requests:.2f} "
        f"busiest_share={share:.3f} busiest_name={name} "
        f"threads={threads or '-'}"
    )


def main(argv):
    if len(argv) >= 3 and argv[1] == "snapshot":
        json.dump(snapshot(argv[2:]), sys.stdout)
    elif len(argv) == 5 and argv[1] == "report":
        with open(argv[2]) as b, open(argv[3]) as a:
            report(json.load(b), json.load(a), max(int(argv[4]), 1))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
