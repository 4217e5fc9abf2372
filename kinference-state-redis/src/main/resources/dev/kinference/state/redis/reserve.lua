-- Reserves every demand or none. KEYS: one counter per demand. Budgets only move forward: a period is reset when
-- the server's clock enters a later one, never when it reads an earlier one.
-- ARGV: lease id, lease ms, then per demand: kind (s sliding, p period, c concurrent), limit, amount, parameter
-- (the sliding window's length in ms, or the period's kind).
-- Returns {1, now} when granted, {0, index (0-based), used, retry ms, now} when refused.
local now = now_ms()
local lease, lease_ms = ARGV[1], tonumber(ARGV[2])
local used, pending, buckets = {}, {}, {}
local n = #KEYS

for i = 1, n do
  local key, at = KEYS[i], 2 + (i - 1) * 4
  local kind, limit, amount, param = ARGV[at + 1], tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), ARGV[at + 4]
  if used[key] == nil then
    local sum = 0
    if kind == 's' then
      local cur = math.floor(now / bucket_width(tonumber(param)))
      local b, stale = {}, {}
      local h = redis.call('HGETALL', key)
      for j = 1, #h, 2 do
        local e = tonumber(h[j])
        if e > cur - 61 then
          local v = tonumber(h[j + 1])
          b[e] = v
          sum = sum + v
        else
          stale[#stale + 1] = h[j]
        end
      end
      if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
      buckets[key] = b
    elseif kind == 'p' then
      local s = period(param, now)
      local stored = redis.call('HMGET', key, 'start', 'total')
      -- a stored period later than this clock's (a failover to a server whose clock is behind) still counts
      if (tonumber(stored[1]) or -1) >= s then sum = tonumber(stored[2]) or 0 end
    else
      sum = leases_held(key, now)
    end
    used[key], pending[key] = sum, 0
  end
  if used[key] + pending[key] + amount > limit then
    local retry = 1000
    if kind == 's' then
      local length = tonumber(param)
      local width = bucket_width(length)
      local cur = math.floor(now / width)
      local must_free = used[key] + pending[key] + amount - limit
      local freed = 0
      retry = length
      if amount <= limit then
        for e = cur - 60, cur do
          freed = freed + (buckets[key][e] or 0)
          if freed >= must_free then
            retry = math.max(1, (e + 61) * width - now)
            break
          end
        end
      end
    elseif kind == 'p' then
      local _, e = period(param, now)
      retry = math.max(1, e - now)
    end
    return {0, i - 1, used[key], retry, now}
  end
  pending[key] = pending[key] + amount
end

for i = 1, n do
  local key, at = KEYS[i], 2 + (i - 1) * 4
  local kind, amount, param = ARGV[at + 1], tonumber(ARGV[at + 3]), ARGV[at + 4]
  if kind == 's' then
    local length = tonumber(param)
    local width = bucket_width(length)
    redis.call('HINCRBY', key, math.floor(now / width), amount)
    redis.call('PEXPIRE', key, length + 2 * width)
  elseif kind == 'p' then
    local s, e = period(param, now)
    if (tonumber(redis.call('HGET', key, 'start')) or -1) < s then
      redis.call('HSET', key, 'start', s, 'total', 0)
    end
    redis.call('HINCRBY', key, 'total', amount)
    redis.call('PEXPIREAT', key, e + DAY)
  else
    redis.call('ZADD', key, now + lease_ms, lease .. '|' .. amount)
    redis.call('PEXPIRE', key, lease_ms * 2)
  end
end
return {1, now}
