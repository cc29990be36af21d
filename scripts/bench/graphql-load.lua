-- wrk script: POSTs one GraphQL document with variables drawn at random from the generated users.
-- Environment: BENCH_TOKEN, BENCH_DOCUMENT, BENCH_VARIABLES (a JSON template where %d is the user
-- number), BENCH_USERS and BENCH_STEP (draw only multiples of it); with BENCH_HOST (a Host template
-- where %d is the project number), BENCH_PROJECTS and BENCH_RUN, user i is asked of project
-- (i // BENCH_RUN) % BENCH_PROJECTS, as the generated users were given to projects.
-- Counts answers with errors or without a user, and prints them as the last line for the runner to
-- read.
local token = os.getenv("BENCH_TOKEN")
local document = os.getenv("BENCH_DOCUMENT")
local variables = os.getenv("BENCH_VARIABLES")
local users = tonumber(os.getenv("BENCH_USERS"))
local step = tonumber(os.getenv("BENCH_STEP") or "1")
local host = os.getenv("BENCH_HOST")
local projects = tonumber(os.getenv("BENCH_PROJECTS") or "1")
local run = tonumber(os.getenv("BENCH_RUN") or "1")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. token

local quoted = document:gsub('\\', '\\\\'):gsub('"', '\\"')
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failures = 0
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

request = function()
  local i = math.floor(math.random(0, users - 1) / step) * step
  local body = '{"query":"' .. quoted .. '","variables":' .. string.format(variables, i) .. '}'
  if not host then
    return wrk.format(nil, nil, nil, body)
  end
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Host"] = string.format(host, math.floor(i / run) % projects)
  return wrk.format(nil, nil, headers, body)
end

response = function(status, headers, body)
  if status ~= 200 or body:find('"errors"', 1, true) or body:find(':null}}$') or body:find(':%[%]}}$') then
    failures = failures + 1
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("failures")
  end
  io.write(string.format("BENCH requests=%d seconds=%f p50_us=%f p99_us=%f failures=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99), failed))
end
