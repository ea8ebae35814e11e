// Lua scripts of the Redis store. They mirror src/telemetry/aggregator.ts exactly (same
// buckets, clamps, sweep and overflow rules), so a fleet behind Redis sees what a fleet
// behind one in-memory server would. ONE script call per report keeps it atomic.
//
// KEYS (all hash-tagged `{scope}` so a Redis Cluster keeps a scope on one slot):
//   1 clients hash  id -> "activeIndex weight reportIndex bucketAttempts throttledIndex"
//   2 active zset   id scored by activeIndex (finds expired clients without a scan)
//   3 ring hash     i<slot> absolute bucket index, a<slot> attempts, t<slot> 429 reports
//   4 meta hash     ws weight sum, sw swept active index, q learned quota per second
// Numbers come back as strings: Redis truncates Lua numbers to integers.

const shared = `
local clientsKey, activeKey, ringKey, metaKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = tonumber(ARGV[1])
local reportBucketMs, reportBuckets = tonumber(ARGV[2]), tonumber(ARGV[3])
local activeBucketMs, activeBuckets = tonumber(ARGV[4]), tonumber(ARGV[5])
local includeCurrent = ARGV[6] == '1'
local slots = reportBuckets + 1
local reportIndex = math.floor(now / reportBucketMs)
local activeIndex = math.floor(now / activeBucketMs)
local oldestActive = activeIndex - activeBuckets + 1

local function fmt(n) return string.format('%.17g', n) end

local function sums()
  local newest = includeCurrent and reportIndex or reportIndex - 1
  local oldest = newest - reportBuckets + 1
  local fields = {}
  for slot = 0, slots - 1 do
    fields[#fields + 1] = 'i' .. slot
    fields[#fields + 1] = 'a' .. slot
    fields[#fields + 1] = 't' .. slot
  end
  local values = redis.call('HMGET', ringKey, unpack(fields))
  local attempts, throttled = 0, 0
  for slot = 0, slots - 1 do
    local index = tonumber(values[slot * 3 + 1])
    if index and index >= oldest and index <= newest then
      attempts = attempts + (tonumber(values[slot * 3 + 2]) or 0)
      throttled = throttled + (tonumber(values[slot * 3 + 3]) or 0)
    end
  end
  return attempts, throttled
end
`

/** ARGV: now, reportBucketMs, reportBuckets, activeBucketMs, activeBuckets, includeCurrent,
 *  clientId, attempts, throttled, weight, quotaHintPerSecond|'', maxAttempts, maxClients, ttlMs, overflowId. */
export const REPORT_SCRIPT = `${shared}
local clientId = ARGV[7]
local attempts, throttled, weight = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local quotaHint = ARGV[11]
local maxAttempts, maxClients, ttlMs, overflowId = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[15]

local weightSum = tonumber(redis.call('HGET', metaKey, 'ws')) or 0
local swept = tonumber(redis.call('HGET', metaKey, 'sw'))
if swept == nil then
  swept = activeIndex
elseif activeIndex > swept then
  local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', '(' .. oldestActive)
  for _, id in ipairs(expired) do
    local packed = redis.call('HGET', clientsKey, id)
    if packed then
      local w = tonumber(string.match(packed, '^%S+ (%S+)'))
      weightSum = weightSum - (w or 0)
      redis.call('HDEL', clientsKey, id)
    end
  end
  redis.call('ZREMRANGEBYSCORE', activeKey, '-inf', '(' .. oldestActive)
  swept = activeIndex
end

local packed = redis.call('HGET', clientsKey, clientId)
if not packed and redis.call('HLEN', clientsKey) >= maxClients then
  clientId = overflowId
  weight = 1
  packed = redis.call('HGET', clientsKey, clientId)
end
local entryReport, bucketAttempts, throttledIndex = -1, 0, -1
if packed then
  local a, w, r, b, t = string.match(packed, '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
  weightSum = weightSum + weight - tonumber(w)
  entryReport, bucketAttempts, throttledIndex = tonumber(r), tonumber(b), tonumber(t)
else
  weightSum = weightSum + weight
end

local slot = reportIndex % slots
local slotIndex = tonumber(redis.call('HGET', ringKey, 'i' .. slot))
if slotIndex ~= reportIndex then
  redis.call('HSET', ringKey, 'i' .. slot, fmt(reportIndex), 'a' .. slot, '0', 't' .. slot, '0')
end
if entryReport ~= reportIndex then
  entryReport = reportIndex
  bucketAttempts = 0
end
local counted = math.max(0, math.min(attempts, maxAttempts - bucketAttempts))
bucketAttempts = bucketAttempts + counted
if counted > 0 then redis.call('HINCRBY', ringKey, 'a' .. slot, counted) end
if throttled > 0 and throttledIndex ~= reportIndex then
  throttledIndex = reportIndex
  redis.call('HINCRBY', ringKey, 't' .. slot, 1)
end

redis.call('HSET', clientsKey, clientId,
  fmt(activeIndex) .. ' ' .. fmt(weight) .. ' ' .. fmt(entryReport) .. ' ' .. fmt(bucketAttempts) .. ' ' .. fmt(throttledIndex))
redis.call('ZADD', activeKey, activeIndex, clientId)
redis.call('HSET', metaKey, 'ws', fmt(weightSum), 'sw', fmt(swept))
if quotaHint ~= '' then redis.call('HSET', metaKey, 'q', quotaHint) end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttlMs) end

local sumAttempts, sumThrottled = sums()
return { fmt(sumAttempts), fmt(sumThrottled), fmt(redis.call('HLEN', clientsKey)), fmt(weightSum), fmt(weight),
  redis.call('HGET', metaKey, 'q') or '' }
`

/** Read-only: ARGV: now, reportBucketMs, reportBuckets, activeBucketMs, activeBuckets, includeCurrent. */
export const READ_SCRIPT = `${shared}
local weightSum = tonumber(redis.call('HGET', metaKey, 'ws')) or 0
local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', '(' .. oldestActive)
for _, id in ipairs(expired) do
  local packed = redis.call('HGET', clientsKey, id)
  if packed then weightSum = weightSum - (tonumber(string.match(packed, '^%S+ (%S+)')) or 0) end
end
local active = redis.call('ZCOUNT', activeKey, oldestActive, '+inf')
local sumAttempts, sumThrottled = sums()
return { fmt(sumAttempts), fmt(sumThrottled), fmt(active), fmt(weightSum), '1',
  redis.call('HGET', metaKey, 'q') or '' }
`
