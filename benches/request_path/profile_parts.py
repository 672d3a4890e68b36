#!/usr/bin/env python3
"""Where a saturated service's CPU goes, by part of the request path.

Reads `perf script -F tid,ip,sym` output of a profile taken with call graphs and
charges each sample to the first frame, leaf first, that names a part (the kernel's
send and receive, allocation, the log line, spans, moka, actix-http, the tokio
scheduler, ...). Prints each part's share and, given the process's CPU microseconds
per request, its microseconds.

    perf record -F 499 --call-graph dwarf,16384 -p PID -o perf.data -- sleep 8
    perf script -i perf.data -F tid,ip,sym > perf.txt
    benches/request_path/profile_parts.py perf.txt [US_PER_REQUEST]

(PID is the service under a saturated wrk run; docs/performance.md says which.)
"""
import collections
import re
import sys

# categories checked leaf -> root; first frame matching any rule wins (rules in priority order per frame)
rules = [
 ("k:send", r"__sys_sendto"), ("k:recv", r"__sys_recvfrom"), ("k:epoll", r"epoll_wait|do_epoll"),
 ("k:futex", r"futex"), ("k:write", r"ksys_write"),
 ("alloc", r"^(_?mi_|mi_|__rust_alloc|__rust_dealloc|__rust_realloc|__rustc::__rust|malloc|free|cfree)"),
 ("sha/hmac", r"sha2::|hmac|KeyHasher"),
 ("log line", r"json_log::|log_writer|LogWriter"),
 ("spans", r"tracing_subscriber|tracing::span|tracing_core|sharded_slab|Span::|record_all|telemetry::"),
 ("moka/cache", r"moka::|coherent_cache|crossbeam"),
 ("body/query parse", r"serde_json|strict_json|json_body|Query::parse|serde_core"),
 ("quota", r"iq_actors::quota"),
 ("dataset", r"iq_actors::dataset"),
 ("auth", r"iq_actors::auth|iq_actors::accounts"),
 ("front", r"iq_service::front"),
 ("mailbox", r"actix::address|actix::context|actix::mailbox|actix::fut|MsgRequest|EnvelopeProxy|oneshot"),
 ("svc:http", r"iq_service::http::(envelope|rate_limit|request_context|credentials|compress|cors|client_ip|protection|body_pace|drain|listener)|iq_service::routes"),
 ("metrics", r"prometheus|metrics"),
 ("actix-http", r"actix_http|httparse|http::header|bytes::"),
 ("actix-web", r"actix_web|actix_router|actix_service|actix_server"),
 ("tokio", r"tokio::|mio::"),
 ("memcpy/set", r"memmove|memcpy|memset|memcmp"),
 ("clock", r"clock_gettime|Timespec|Instant|chrono"),
 ("fmt", r"core::fmt|alloc::fmt"),
 ("vec/string", r"alloc::raw_vec|alloc::vec|alloc::string|hashbrown"),
]
rules = [(n, re.compile(p)) for n, p in rules]
counts = collections.Counter(); total = 0
def flush(frames):
    global total
    if not frames: return
    total += 1
    for f in frames:
        for n, p in rules:
            if p.search(f):
                counts[n] += 1; return
    counts["other: " + (frames[0][:60] if frames else "?")] += 1
frames = []
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        flush(frames); frames = []; continue
    parts = line.strip().split(None, 1)
    frames.append(parts[1] if len(parts) > 1 else "?")
flush(frames)
scale = float(sys.argv[2]) if len(sys.argv) > 2 else 100.0
other = sum(v for k, v in counts.items() if k.startswith("other"))
for k, v in counts.most_common():
    if not k.startswith("other"): print(f"{k:20s} {100*v/total:5.1f}%  {scale*v/total:5.1f} us")
print(f"{'other':20s} {100*other/total:5.1f}%")
for k, v in counts.most_common(12):
    if k.startswith("other"): print("   ", k, v)
