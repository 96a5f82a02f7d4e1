-- One kind of request per wrk process (bench/load.sh): cycles through the
-- paths of the file given after `--`, counts answers by status, and prints
-- them with the latency percentiles as two machine-readable lines.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  paths = {}
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  counts = {}
  i = math.random(#paths)
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i], { ["Host"] = "127.0.0.1" })
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("counts")) do
      total[k] = (total[k] or 0) + v
    end
  end
  local parts = {}
  for k, v in pairs(total) do parts[#parts + 1] = k .. "=" .. v end
  table.sort(parts)
  io.write("STATUS " .. table.concat(parts, " ") .. "\n")
  io.write(string.format("LAT p50=%.1f p99=%.1f max=%.1f n=%d errors=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout))
end
