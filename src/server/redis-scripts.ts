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
//                   qm median quota, qt trusted quota, lr last report, v layout (2: the zsets below)
//   5 sources hash  source -> "trusted clients weight reportIndex bucketAttempts bucketThrottled quota|-"
//   6 tenant zset   scope scored by its last report (live scopes, the scope cap, the dashboard)
//   7 tenant hash   scope -> ids tracked in it
//   8 tenant total  ids tracked over the tenant's scopes
//   9 source zset   scopes the reporting source touched, scored by time (its scope cap)
//  10 clients zset  source scored by its clients     } every source: the medians by rank,
//  11 weights zset  source scored by its weight      } O(log n), where a sort of every
//  12 hints zset    source scored by its quota hint  } source's counts used to run
//  13 untrusted clients zset, 14 untrusted weights zset: the same for untrusted sources, whose
//                   counted sums move by the sources between the old cap and the new one
//  15 claim order zset  every untrusted source's key 9, scored by a sequence of its last claim } report only: the
//  16 claim books hash  key 9 -> "records lastClaimAt"; 'total' records, 'seq' the sequence   } maxScopeClaims cap
// Numbers come back as strings: Redis truncates Lua numbers to integers.

const shared = `
local clientsKey, activeKey, ringKey, metaKey, sourcesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local rankClientsKey, rankWeightsKey, rankHintsKey, untrustedClientsKey, untrustedWeightsKey = KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14]
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

-- The median of a zset's scores, as median() of them would give it: by rank, O(log n).
local function rankedMedian(key)
  local n = redis.call('ZCARD', key)
  if n == 0 then return nil end
  local middle = math.floor(n / 2)
  if n % 2 == 1 then return tonumber(redis.call('ZRANGE', key, middle, middle, 'WITHSCORES')[2]) end
  local pair = redis.call('ZRANGE', key, middle - 1, middle, 'WITHSCORES')
  return (tonumber(pair[2]) + tonumber(pair[4])) / 2
end

-- How the sum of min(x, cap) over a zset's scores moves when the cap goes from 'from' to 'to':
-- only the scores between the two caps and the count above them matter (math.huge: no cap yet).
local function capDelta(key, from, to)
  if from == to then return 0 end
  local low, high = math.min(from, to), math.max(from, to)
  local between = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(low), high == math.huge and '+inf' or '(' .. fmt(high), 'WITHSCORES')
  local delta = 0
  for i = 2, #between, 2 do delta = delta + tonumber(between[i]) - low end
  if high ~= math.huge then delta = delta + (high - low) * redis.call('ZCOUNT', key, fmt(high), '+inf') end
  if to < from then return -delta end
  return delta
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
  local values = redis.call('HMGET', metaKey, 'sw', 'tr', 'kn', 'kw', 'cn', 'cw', 'qm', 'qt', 'lr', 'v')
  meta.sw, meta.tr, meta.kn, meta.kw = tonumber(values[1]), tonumber(values[2]) or 0, tonumber(values[3]), tonumber(values[4])
  meta.cn, meta.cw, meta.qm, meta.qt, meta.lr = tonumber(values[5]) or 0, tonumber(values[6]) or 0, tonumber(values[7]), tonumber(values[8]), tonumber(values[9])
  -- no caps yet (a new scope): every source counts in full until the first recompute
  meta.kn, meta.kw, meta.v = meta.kn or math.huge, meta.kw or math.huge, values[10]
end
-- A scope idle this long is gone, whatever Redis's own clock did with the TTLs.
local live = meta.lr ~= nil and now - meta.lr < idleMs

local function countedClients(s) if s.trusted then return s.clients end return math.min(s.clients, meta.kn) end
local function countedWeight(s) if s.trusted then return s.weight end return math.min(s.weight, meta.kw) end

-- A source's clients and weight in the ranking zsets (it joined or changed; ZADD moves it).
local function rankSource(key, s)
  redis.call('ZADD', rankClientsKey, fmt(s.clients), key)
  redis.call('ZADD', rankWeightsKey, fmt(s.weight), key)
  if not s.trusted then
    redis.call('ZADD', untrustedClientsKey, fmt(s.clients), key)
    redis.call('ZADD', untrustedWeightsKey, fmt(s.weight), key)
  end
end

local function unrankSource(key)
  for _, zset in ipairs({ rankClientsKey, rankWeightsKey, rankHintsKey, untrustedClientsKey, untrustedWeightsKey }) do
    redis.call('ZREM', zset, key)
  end
end

-- Bounds from the median source and the median hint, by rank. cn/cw always hold the sums under
-- the caps kept (every change to a source adds its own difference), so a new cap moves them by
-- the sources between the old cap and the new one, not by a pass over every source.
local function recompute()
  local kn = math.ceil(multiple * (rankedMedian(rankClientsKey) or 1))
  local kw = math.ceil(multiple * (rankedMedian(rankWeightsKey) or 1))
  meta.cn = meta.cn + capDelta(untrustedClientsKey, meta.kn, kn)
  meta.cw = meta.cw + capDelta(untrustedWeightsKey, meta.kw, kw)
  meta.kn, meta.kw = kn, kw
  if redis.call('ZCARD', rankHintsKey) >= minQuotaSources then meta.qm = rankedMedian(rankHintsKey) else meta.qm = nil end
end

-- A scope written before the zsets existed (layout 1): rank its sources once, and sum what they
-- count for under the caps kept.
if live and meta.v ~= '2' then
  local all = redis.call('HGETALL', sourcesKey)
  local cn, cw = 0, 0
  for i = 1, #all, 2 do
    local s = parseSource(all[i + 1])
    rankSource(all[i], s)
    if s.quota then redis.call('ZADD', rankHintsKey, fmt(s.quota), all[i]) end
    cn = cn + countedClients(s)
    cw = cw + countedWeight(s)
  end
  meta.cn, meta.cw = cn, cw
end
meta.v = '2'

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
      meta.cn, meta.cw = meta.cn - countedClients(s), meta.cw - countedWeight(s)
      s.clients = s.clients - 1
      s.weight = s.weight - tonumber(w)
      if s.clients == 0 then
        redis.call('HDEL', sourcesKey, source)
        unrankSource(source)
      else
        redis.call('HSET', sourcesKey, source, packSource(s))
        rankSource(source, s)
        meta.cn, meta.cw = meta.cn + countedClients(s), meta.cw + countedWeight(s)
      end
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
    'cn', fmt(meta.cn), 'cw', fmt(meta.cw), 'v', meta.v)
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
 *  maxScopesPerSource, maxClientsPerSource, maxScopeClaims.
 *  → { 'ok'|'dup', attempts, 429 reports, counted clients, counted weight, weight, source weight,
 *      weight cap, source trusted, quota|'' } or { 'refused', retryAfterMs }. */
export const REPORT_SCRIPT = `${shared}
local tenantScopes, tenantCounts, tenantTotal, claimsKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local scope, clientId = ARGV[11], ARGV[12]
local attempts, throttled, weightArg = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
local quotaHint, seqArg, sourceKey, trusted, overflowId = ARGV[16], ARGV[17], ARGV[18], ARGV[19] == '1', ARGV[20]
local maxAttempts, maxClientsPerScope, maxScopes = tonumber(ARGV[21]), tonumber(ARGV[22]), tonumber(ARGV[23])
local maxClients, maxScopesPerSource, maxClientsPerSource = tonumber(ARGV[24]), tonumber(ARGV[25]), tonumber(ARGV[26])
local claimOrderKey, claimBooksKey, maxScopeClaims = KEYS[15], KEYS[16], tonumber(ARGV[27])

-- The records of which scopes each untrusted source reported on (its key 9), capped over the
-- tenant as the memory store caps them (aggregator.ts, claim()): beyond maxScopeClaims the
-- sources that claimed least recently are forgotten, never refused. Without the cap they only
-- expired by TTL, so a fleet of many addresses grew Redis without bound within a TTL. The order
-- is a sequence, not the time, so it is the memory store's even within one millisecond. The
-- books hold each source's count as last seen, so one forgotten after Redis expired its set on
-- its own clock still leaves the total right. A hash field named 'total' or 'seq' is no key 9
-- (those hold the hash tag's braces).
local claimBooks = redis.call('HMGET', claimBooksKey, 'total', 'seq')
local claimTotal, claimSeq = tonumber(claimBooks[1]) or 0, tonumber(claimBooks[2]) or 0

local function forgetSource(key)
  local entry = redis.call('HGET', claimBooksKey, key)
  if entry then claimTotal = claimTotal - tonumber(string.match(entry, '^(%S+)')) end
  redis.call('HDEL', claimBooksKey, key)
  redis.call('ZREM', claimOrderKey, key)
  redis.call('DEL', key)
end

local function saveClaims()
  redis.call('HSET', claimBooksKey, 'total', fmt(claimTotal), 'seq', fmt(claimSeq))
  redis.call('PEXPIRE', claimBooksKey, ttlMs)
  redis.call('PEXPIRE', claimOrderKey, ttlMs)
end

-- Sources whose last claim is an idle window old leave, least recent first (as prune() does).
-- At most 64 per report keeps one script short; any left go with the next reports, which add
-- at most one source each.
for _ = 1, 64 do
  local oldest = redis.call('ZRANGE', claimOrderKey, 0, 0)[1]
  if not oldest then break end
  local lastAt = tonumber(string.match(redis.call('HGET', claimBooksKey, oldest) or '', ' (%S+)$'))
  if lastAt and now - lastAt < idleMs then break end
  forgetSource(oldest)
end

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
  redis.call('DEL', clientsKey, activeKey, ringKey, metaKey, sourcesKey, rankClientsKey, rankWeightsKey, rankHintsKey, untrustedClientsKey, untrustedWeightsKey)
  meta = { tr = 0, cn = 0, cw = 0, kn = math.huge, kw = math.huge, v = '2' }
end

-- This source's records in claimTotal: what its set holds once its expired ones are dropped
-- (claimsOf()); none while the books do not know it (a set they have not counted is counted at its next claim).
local counted = 0
if not trusted then
  redis.call('ZREMRANGEBYSCORE', claimsKey, '-inf', now - idleMs)
  local entry = redis.call('HGET', claimBooksKey, claimsKey)
  if entry then
    local recorded, lastAt = string.match(entry, '^(%S+) (%S+)$')
    counted = redis.call('ZCARD', claimsKey)
    if counted ~= tonumber(recorded) then
      claimTotal = claimTotal + counted - tonumber(recorded)
      redis.call('HSET', claimBooksKey, claimsKey, fmt(counted) .. ' ' .. lastAt)
    end
  end
  if not redis.call('ZSCORE', claimsKey, scope) and redis.call('ZCARD', claimsKey) >= maxScopesPerSource then
    local oldest = redis.call('ZRANGE', claimsKey, 0, 0, 'WITHSCORES')
    redis.call('SET', tenantTotal, fmt(total), 'PX', ttlMs)
    saveClaims()
    return { 'refused', fmt(math.max(1, idleMs - (now - tonumber(oldest[2])))) }
  end
end
if not live and redis.call('ZCARD', tenantScopes) >= maxScopes then
  local oldest = redis.call('ZRANGE', tenantScopes, 0, 0, 'WITHSCORES')
  redis.call('SET', tenantTotal, fmt(total), 'PX', ttlMs)
  saveClaims()
  return { 'refused', fmt(math.max(1, idleMs - (now - tonumber(oldest[2])))) }
end
if not trusted then
  redis.call('ZADD', claimsKey, now, scope)
  redis.call('PEXPIRE', claimsKey, ttlMs)
  local held = redis.call('ZCARD', claimsKey)
  claimTotal = claimTotal + held - counted
  claimSeq = claimSeq + 1
  redis.call('HSET', claimBooksKey, claimsKey, fmt(held) .. ' ' .. fmt(now))
  redis.call('ZADD', claimOrderKey, claimSeq, claimsKey)
  -- Over the cap: forget the least recent sources, never this one (at most 64 a report: one
  -- claim adds one record, so that only matters after the cap was lowered).
  for _ = 1, 64 do
    if claimTotal <= maxScopeClaims then break end
    local oldest = redis.call('ZRANGE', claimOrderKey, 0, 0)[1]
    if not oldest or oldest == claimsKey then break end
    forgetSource(oldest)
  end
end
saveClaims()
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
  for i = 10, 14 do redis.call('PEXPIRE', KEYS[i], ttlMs) end
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
local changed = createdEntry or weight ~= entry.weight
source.weight = source.weight + weight - entry.weight
entry.weight = weight
if seqArg ~= '' and entry.tracked then entry.seq = tonumber(seqArg) end
meta.cn = meta.cn + countedClients(source) - beforeClients
meta.cw = meta.cw + countedWeight(source) - beforeWeight
if changed then rankSource(entrySourceKey, source) end
if movesMedian then recompute() end

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
    redis.call('ZADD', rankHintsKey, fmt(hint), entrySourceKey)
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
