-- wrk script of benches/request_path.sh: one request shape per run, set from the
-- environment (wrk passes no other way into its Lua states), and one machine-readable
-- summary line at the end for the shell script to parse.
--
--   WRK_METHOD    GET or POST (default GET)
--   WRK_BODY      request body (POST); sent with Content-Type: application/json
--   WRK_API_KEY   sent as X-API-Key when set and not empty
--   WRK_DELAY_MS  paced mode: mean pause in milliseconds between a response and the
--                 next request on the same connection (see delay() below)

wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body and body ~= "" then
   wrk.body = body
   wrk.headers["Content-Type"] = "application/json"
end
local key = os.getenv("WRK_API_KEY")
if key and key ~= "" then
   wrk.headers["X-API-Key"] = key
end

-- Each thread gets its own Lua state; seed each differently so that the two threads'
-- pauses are not in lock step.
local threads = 0
function setup(thread)
   threads = threads + 1
   thread:set("seed", threads)
end

function init(args)
   math.randomseed(os.time() * 1000 + (seed or 0))
end

-- Paced mode (wrk2 is not packaged): wrk calls delay() after each response and waits
-- that many whole milliseconds before the connection's next request. The pause is
-- drawn uniformly from [0.5, 1.5] x the mean, and rounded up or down at random in
-- proportion, so the mean is exact despite the millisecond granularity and the
-- connections do not fire in bursts. wrk measures latency from the write of the
-- request, so the pause is not part of it.
local mean_delay = tonumber(os.getenv("WRK_DELAY_MS") or "")
if mean_delay then
   function delay()
      local d = mean_delay * (0.5 + math.random())
      local whole = math.floor(d)
      if math.random() < d - whole then
         whole = whole + 1
      end
      return whole
   end
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "WRK_RESULT requests=%d duration_us=%d status_errors=%d socket_errors=%d " ..
      "mean_us=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
      summary.requests, summary.duration, e.status,
      e.connect + e.read + e.write + e.timeout,
      latency.mean, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max))
end
