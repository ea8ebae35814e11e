// Lua scripts of the Redis store. They mirror src/telemetry/aggregator.ts exactly (same
// buckets, clamps, sweep, per-source bounds from the median source, overflow, sequence and
// scope rules), so a fleet behind Redis sees what a fleet behind one in-memory server would.
// ONE script call per report keeps it atomic.
//
// KEYS (all hash-tagged `{tenant}`, so a Redis Cluster keeps a tenant on one slot and the
// tenant-wide bounds stay atomic):
//   1 clients hash  id -> "activeIndex weight reportIndex bucketAttempts throttledIndex seq tracked source"
//   2 active zset   id scored by activeIndex (finds expired clients without a scan)
//   3 ring hash     i<slot> bucket index, a<slot> attempts, t<slot> 429 reports, x<slot> 429 attempts
//   4 meta hash     sw swept index, tr tracked ids, kn/kw caps, cn/cw counted clients/weight,
//                   qm median quota, qt trusted quota, lr last report
//   5 sources hash  source -> "trusted clients weight reportIndex bucketAttempts bucketThrottled quota|-"
//   6 tenant zset   scope scored by its last report (live scopes, the scope cap, the dashboard)
//   7 tenant hash   scope -> ids tracked in it
//   8 tenant total  ids tracked over the tenant's scopes
//   9 source zset   scopes the reporting source touched, scored by time (its scope cap)
// Numbers come back as strings: Redis truncates Lua numbers to integers.

const shared = `
local clientsKey, activeKey, ringKey, metaKey, sourcesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = tonumber(ARGV[1])
local reportBucketMs, reportBuckets = tonumber(ARGV[2]), tonumber(ARGV[3])
local activeBucketMs, activeBuckets = tonumber(ARGV[4]), tonumber(ARGV[5])
local includeCurrent = ARGV[6] == '1'
local idleMs, multiple, minQuotaSources = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
-- Keys outlive the idle window: liveness is decided by the scripts' clock (last report), the TTL only collects garbage.
local ttlMs = tonumber(ARGV[10])
local slots = reportBuckets + 1
local reportIndex = math.floor(now / reportBucketMs)
local activeIndex = math.floor(now / activeBucketMs)
local oldestActive = activeIndex - activeBuckets + 1

local function fmt(n) return string.format('%.17g', n) end

local function median(values)
  local n = #values
  if n == 0 then return nil end
  table.sort(values)
  if n % 2 == 1 then return values[(n + 1) / 2] end
  return (values[n / 2] + values[n / 2 + 1]) / 2
end

local function parseSource(packed)
  local t, c, w, r, a, th, q = string.match(packed, '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$')
  return { trusted = t == '1', clients = tonumber(c), weight = tonumber(w), reportIndex = tonumber(r),
    attempts = tonumber(a), throttled = tonumber(th), quota = tonumber(q) }
end

local function packSource(s)
  return (s.trusted and '1' or '0') .. ' ' .. fmt(s.clients) .. ' ' .. fmt(s.weight) .. ' ' .. fmt(s.reportIndex) .. ' ' ..
    fmt(s.attempts) .. ' ' .. fmt(s.throttled) .. ' ' .. (s.quota and fmt(s.quota) or '-')
end

local meta = {}
do
  local values = redis.call('HMGET', metaKey, 'sw', 'tr', 'kn', 'kw', 'cn', 'cw', 'qm', 'qt', 'lr')
  meta.sw, meta.tr, meta.kn, meta.kw = tonumber(values[1]), tonumber(values[2]) or 0, tonumber(values[3]), tonumber(values[4])
  meta.cn, meta.cw, meta.qm, meta.qt, meta.lr = tonumber(values[5]) or 0, tonumber(values[6]) or 0, tonumber(values[7]), tonumber(values[8]), tonumber(values[9])
end
-- A scope idle this long is gone, whatever Redis's own clock did with the TTLs.
local live = meta.lr ~= nil and now - meta.lr < idleMs

local function countedClients(s) if s.trusted then return s.clients end return math.min(s.clients, meta.kn) end
local function countedWeight(s) if s.trusted then return s.weight end return math.min(s.weight, meta.kw) end

local function recompute()
  local all = redis.call('HGETALL', sourcesKey)
  local clients, weights, hints, parsed = {}, {}, {}, {}
  for i = 2, #all, 2 do
    local s = parseSource(all[i])
    parsed[#parsed + 1] = s
    clients[#clients + 1] = s.clients
    weights[#weights + 1] = s.weight
    if s.quota then hints[#hints + 1] = s.quota end
  end
  meta.kn = math.ceil(multiple * (median(clients) or 1))
  meta.kw = math.ceil(multiple * (median(weights) or 1))
  local cn, cw = 0, 0
  for _, s in ipairs(parsed) do
    cn = cn + countedClients(s)
    cw = cw + countedWeight(s)
  end
  meta.cn, meta.cw = cn, cw
  if #hints >= minQuotaSources then meta.qm = median(hints) else meta.qm = nil end
end

-- Expired clients leave (and their sources with the last of them); the bounds follow.
local function sweep(onTracked)
  if meta.sw == nil then
    meta.sw = activeIndex
    return
  end
  if activeIndex <= meta.sw then return end
  meta.sw = activeIndex
  local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', '(' .. oldestActive)
  for _, id in ipairs(expired) do
    local packed = redis.call('HGET', clientsKey, id)
    if packed then
      local w, tracked, source = string.match(packed, '^%S+ (%S+) %S+ %S+ %S+ %S+ (%S+) (.+)$')
      local s = parseSource(redis.call('HGET', sourcesKey, source))
      s.clients = s.clients - 1
      s.weight = s.weight - tonumber(w)
      if s.clients == 0 then redis.call('HDEL', sourcesKey, source) else redis.call('HSET', sourcesKey, source, packSource(s)) end
      if tracked == '1' then
        meta.tr = meta.tr - 1
        onTracked()
      end
      redis.call('HDEL', clientsKey, id)
    end
  end
  redis.call('ZREMRANGEBYSCORE', activeKey, '-inf', '(' .. oldestActive)
  recompute()
end

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

local function writeMeta()
  redis.call('HSET', metaKey, 'sw', fmt(meta.sw), 'tr', fmt(meta.tr), 'kn', fmt(meta.kn), 'kw', fmt(meta.kw),
    'cn', fmt(meta.cn), 'cw', fmt(meta.cw))
  if meta.qm then redis.call('HSET', metaKey, 'qm', fmt(meta.qm)) else redis.call('HDEL', metaKey, 'qm') end
end

local function quota()
  if meta.qt then return fmt(meta.qt) end
  if meta.qm then return fmt(meta.qm) end
  return ''
end
`

/** ARGV: now, reportBucketMs, reportBuckets, activeBucketMs, activeBuckets, includeCurrent, idleMs,
 *  sourceMedianMultiple, minQuotaSources, keyTtlMs, scope, clientId, attempts, throttled, weight, quotaHint|'',
 *  seq|'', source, trusted, overflowId, maxAttempts, maxClientsPerScope, maxScopes, maxClients,
 *  maxScopesPerSource, maxClientsPerSource.
 *  → { 'ok'|'dup', attempts, 429 reports, counted clients, counted weight, weight, source weight,
 *      weight cap, source trusted, quota|'' } or { 'refused', retryAfterMs }. */
export const REPORT_SCRIPT = `${shared}
local tenantScopes, tenantCounts, tenantTotal, claimsKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local scope, clientId = ARGV[11], ARGV[12]
local attempts, throttled, weightArg = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
local quotaHint, seqArg, sourceKey, trusted, overflowId = ARGV[16], ARGV[17], ARGV[18], ARGV[19] == '1', ARGV[20]
local maxAttempts, maxClientsPerScope, maxScopes = tonumber(ARGV[21]), tonumber(ARGV[22]), tonumber(ARGV[23])
local maxClients, maxScopesPerSource, maxClientsPerSource = tonumber(ARGV[24]), tonumber(ARGV[25]), tonumber(ARGV[26])

-- Scopes idle past the window leave the tenant's books (their own keys expire by TTL).
local total = tonumber(redis.call('GET', tenantTotal)) or 0
local gone = redis.call('ZRANGEBYSCORE', tenantScopes, '-inf', now - idleMs)
for _, name in ipairs(gone) do
  total = total - (tonumber(redis.call('HGET', tenantCounts, name)) or 0)
  redis.call('HDEL', tenantCounts, name)
end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', tenantScopes, '-inf', now - idleMs) end
if not live then
  -- Keys Redis expired on its own clock before the tenant's books noticed: settle them here.
  total = total - (tonumber(redis.call('HGET', tenantCounts, scope)) or 0)
  redis.call('HDEL', tenantCounts, scope)
  redis.call('DEL', clientsKey, activeKey, ringKey, metaKey, sourcesKey)
  meta = { tr = 0, cn = 0, cw = 0 }
end

if not trusted then
  redis.call('ZREMRANGEBYSCORE', claimsKey, '-inf', now - idleMs)
  if not redis.call('ZSCORE', claimsKey, scope) and redis.call('ZCARD', claimsKey) >= maxScopesPerSource then
    local oldest = redis.call('ZRANGE', claimsKey, 0, 0, 'WITHSCORES')
    redis.call('SET', tenantTotal, fmt(total), 'PX', ttlMs)
    return { 'refused', fmt(math.max(1, idleMs - (now - tonumber(oldest[2])))) }
  end
end
if not live and redis.call('ZCARD', tenantScopes) >= maxScopes then
  local oldest = redis.call('ZRANGE', tenantScopes, 0, 0, 'WITHSCORES')
  redis.call('SET', tenantTotal, fmt(total), 'PX', ttlMs)
  return { 'refused', fmt(math.max(1, idleMs - (now - tonumber(oldest[2])))) }
end
if not trusted then
  redis.call('ZADD', claimsKey, now, scope)
  redis.call('PEXPIRE', claimsKey, ttlMs)
end
redis.call('ZADD', tenantScopes, now, scope)
redis.call('HSET', metaKey, 'lr', fmt(now))

local swept = 0
sweep(function() swept = swept + 1 end)
total = total - swept

local function reply(status, weight, source)
  local sumAttempts, sumThrottled = sums()
  return { status, fmt(sumAttempts), fmt(sumThrottled), fmt(meta.cn), fmt(meta.cw), fmt(weight), fmt(source.weight),
    fmt(meta.kw), source.trusted and '1' or '0', quota() }
end

local function finish()
  writeMeta()
  redis.call('HSET', tenantCounts, scope, fmt(meta.tr))
  redis.call('SET', tenantTotal, fmt(total), 'PX', ttlMs)
  for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ttlMs) end
  redis.call('PEXPIRE', tenantScopes, ttlMs)
  redis.call('PEXPIRE', tenantCounts, ttlMs)
end

local packed = redis.call('HGET', clientsKey, clientId)
if packed and seqArg ~= '' then
  local entrySeq, entrySource = string.match(packed, '^%S+ %S+ %S+ %S+ %S+ (%S+) %S+ (.+)$')
  if tonumber(seqArg) <= tonumber(entrySeq) then
    local w = tonumber(string.match(packed, '^%S+ (%S+)'))
    local result = reply('dup', w, parseSource(redis.call('HGET', sourcesKey, entrySource)))
    finish()
    return result
  end
end

local entry, source, entrySourceKey
local createdEntry, createdSource = false, false
if packed then
  local a, w, r, b, t, q, tr, src = string.match(packed, '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (.+)$')
  entry = { weight = tonumber(w), reportIndex = tonumber(r), attempts = tonumber(b), throttledIndex = tonumber(t), seq = tonumber(q), tracked = tr == '1' }
  entrySourceKey = src
else
  entrySourceKey = sourceKey
  local tracked = true
  local own = redis.call('HGET', sourcesKey, sourceKey)
  local ownClients = own and parseSource(own).clients or 0
  if meta.tr >= maxClientsPerScope or total >= maxClients or (not trusted and ownClients >= maxClientsPerSource) then
    clientId = overflowId
    entrySourceKey = overflowId
    tracked = false
    packed = redis.call('HGET', clientsKey, clientId)
  end
  if packed then
    local a, w, r, b, t, q, tr = string.match(packed, '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) ')
    entry = { weight = tonumber(w), reportIndex = tonumber(r), attempts = tonumber(b), throttledIndex = tonumber(t), seq = tonumber(q), tracked = tr == '1' }
  else
    entry = { weight = 0, reportIndex = -1, attempts = 0, throttledIndex = -1, seq = -1, tracked = tracked }
    createdEntry = true
  end
end
local packedSource = redis.call('HGET', sourcesKey, entrySourceKey)
if packedSource then
  source = parseSource(packedSource)
else
  source = { trusted = trusted and entry.tracked, clients = 0, weight = 0, reportIndex = -1, attempts = 0, throttled = 0, quota = nil }
  createdSource = true
end

-- as in the aggregator: only a new client in a source at or below the bound may move the median
local movesMedian = createdSource or (createdEntry and source.clients <= meta.kn)
local beforeClients, beforeWeight = 0, 0
if not createdSource then beforeClients, beforeWeight = countedClients(source), countedWeight(source) end
if createdEntry then
  source.clients = source.clients + 1
  if entry.tracked then
    meta.tr = meta.tr + 1
    total = total + 1
  end
end
local weight = 1
if entry.tracked then weight = weightArg end
source.weight = source.weight + weight - entry.weight
entry.weight = weight
if seqArg ~= '' and entry.tracked then entry.seq = tonumber(seqArg) end
if movesMedian then
  redis.call('HSET', sourcesKey, entrySourceKey, packSource(source))
  recompute()
else
  meta.cn = meta.cn + countedClients(source) - beforeClients
  meta.cw = meta.cw + countedWeight(source) - beforeWeight
end

local slot = reportIndex % slots
local slotIndex = tonumber(redis.call('HGET', ringKey, 'i' .. slot))
if slotIndex ~= reportIndex then
  redis.call('HSET', ringKey, 'i' .. slot, fmt(reportIndex), 'a' .. slot, '0', 't' .. slot, '0', 'x' .. slot, '0')
end
if entry.reportIndex ~= reportIndex then
  entry.reportIndex = reportIndex
  entry.attempts = 0
end
if source.reportIndex ~= reportIndex then
  source.reportIndex = reportIndex
  source.attempts = 0
  source.throttled = 0
end
local sourceClients = countedClients(source)
local room = math.min(maxAttempts - entry.attempts, sourceClients * maxAttempts - source.attempts)
local counted = math.max(0, math.min(attempts, room))
entry.attempts = entry.attempts + counted
source.attempts = source.attempts + counted
if counted > 0 then
  redis.call('HINCRBY', ringKey, 'a' .. slot, counted)
  redis.call('HINCRBY', ringKey, 'x' .. slot, math.min(throttled, counted))
end
if throttled > 0 and entry.throttledIndex ~= reportIndex and source.throttled < sourceClients then
  entry.throttledIndex = reportIndex
  source.throttled = source.throttled + 1
  redis.call('HINCRBY', ringKey, 't' .. slot, 1)
end

local recomputeAfter = false
if quotaHint ~= '' then
  local hint = tonumber(quotaHint)
  if trusted then
    meta.qt = hint
    redis.call('HSET', metaKey, 'qt', quotaHint)
  end
  if source.quota ~= hint then
    source.quota = hint
    recomputeAfter = true
  end
end
redis.call('HSET', sourcesKey, entrySourceKey, packSource(source))
if recomputeAfter then recompute() end

redis.call('HSET', clientsKey, clientId,
  fmt(activeIndex) .. ' ' .. fmt(entry.weight) .. ' ' .. fmt(entry.reportIndex) .. ' ' .. fmt(entry.attempts) .. ' ' ..
  fmt(entry.throttledIndex) .. ' ' .. fmt(entry.seq) .. ' ' .. (entry.tracked and '1' or '0') .. ' ' .. entrySourceKey)
redis.call('ZADD', activeKey, activeIndex, clientId)
local result = reply('ok', weight, source)
finish()
return result
`

/** Read (sweeps like the memory read): ARGV: now … minQuotaSources as above.
 *  → { attempts, 429 reports, counted clients, counted weight, '1', '1', '1', '1', quota|'', sources,
 *      lastReport, then per report bucket oldest first: attempts, 429 attempts }. */
export const READ_SCRIPT = `${shared}
if not live then
  return { '0', '0', '0', '0', '1', '1', '1', '1', '', '0', '0' }
end
local tenantTotal = KEYS[8]
local swept = 0
sweep(function() swept = swept + 1 end)
if swept > 0 then
  redis.call('HSET', KEYS[7], ARGV[11], fmt(meta.tr))
  redis.call('DECRBY', tenantTotal, swept)
end
writeMeta()
local sumAttempts, sumThrottled = sums()
local result = { fmt(sumAttempts), fmt(sumThrottled), fmt(meta.cn), fmt(meta.cw), '1', '1', '1', '1', quota(),
  fmt(redis.call('HLEN', sourcesKey)), fmt(meta.lr) }
for index = reportIndex - reportBuckets + 1, reportIndex do
  local slot = index % slots
  local values = redis.call('HMGET', ringKey, 'i' .. slot, 'a' .. slot, 'x' .. slot)
  if tonumber(values[1]) == index then
    result[#result + 1] = values[2] or '0'
    result[#result + 1] = values[3] or '0'
  else
    result[#result + 1] = '0'
    result[#result + 1] = '0'
  end
end
return result
`

/** Gauges of one tenant: KEYS 1 tenant zset, 2 tenant hash; ARGV now, idleMs → { live scopes, tracked ids }. */
export const GAUGE_SCRIPT = `
local now, idleMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local scopes = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - idleMs), '+inf')
local ids = 0
for _, name in ipairs(scopes) do ids = ids + (tonumber(redis.call('HGET', KEYS[2], name)) or 0) end
return { tostring(#scopes), tostring(ids) }
`
