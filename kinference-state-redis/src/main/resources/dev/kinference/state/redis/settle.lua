-- Settles a reservation (or absorbs amounts admitted elsewhere) and adds one request's usage to the totals.
-- KEYS: one counter per demand.
-- ARGV: lease id, reserved at (ms, the store's clock at the reservation), count of demands, then per demand: kind,
-- reserved amount, actual amount, parameter; then the operation's key (or '') and how long it is remembered (ms);
-- then the usage: 1 or 0 (none), key prefix, tenant, model, failed (1/0), input, cached, output, cost micros,
-- currency, at (ms; 0 = now), hour / day / month retention in ms.
local now = now_ms()
local lease, at, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local op, op_ms = ARGV[3 + n * 4 + 1], tonumber(ARGV[3 + n * 4 + 2])
-- each settlement applies once: a retry of one that timed out but ran is recognised by its id
if op ~= '' and not redis.call('SET', op, '1', 'NX', 'PX', op_ms) then return now end

for i = 1, n do
  local key, a = KEYS[i], 3 + (i - 1) * 4
  local kind, reserved, actual, param = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), ARGV[a + 4]
  local delta = actual - reserved
  if kind == 's' then
    local length = tonumber(param)
    local width = bucket_width(length)
    local e = math.floor(at / width)
    if delta ~= 0 and e > math.floor(now / width) - 61 then
      if redis.call('HINCRBY', key, e, delta) < 0 then redis.call('HSET', key, e, 0) end
      redis.call('PEXPIRE', key, length + 2 * width)
    end
  elseif kind == 'p' then
    local s = period(param, at)
    local stored = tonumber(redis.call('HGET', key, 'start'))
    if stored ~= nil and stored > s then
      -- a later period is counting (the reservation's was before a reset): nothing to correct there
    elseif stored == s then
      if delta ~= 0 and redis.call('HINCRBY', key, 'total', delta) < 0 then redis.call('HSET', key, 'total', 0) end
    elseif (stored == nil or stored < s) and s == period(param, now) and delta > 0 then
      local _, e = period(param, now)
      redis.call('HSET', key, 'start', s, 'total', delta)
      redis.call('PEXPIREAT', key, e + DAY)
    end
  elseif lease ~= '' then
    redis.call('ZREM', key, lease .. '|' .. reserved)
  end
end

local u = 3 + n * 4 + 2
if ARGV[u + 1] == '1' then
  local prefix, tenant, model = ARGV[u + 2], ARGV[u + 3], ARGV[u + 4]
  local failed, input, cached, output, cost = tonumber(ARGV[u + 5]), ARGV[u + 6], ARGV[u + 7], ARGV[u + 8], ARGV[u + 9]
  local currency, when = ARGV[u + 10], tonumber(ARGV[u + 11])
  if when == 0 then when = now end
  local kinds = {'hour', 'day', 'month'}
  for k = 1, 3 do
    local s = period(kinds[k], when)
    local key = prefix .. 'usage:' .. tenant .. ':' .. kinds[k] .. ':' .. s
    redis.call('HINCRBY', key, model .. '|requests', 1)
    redis.call('HINCRBY', key, model .. '|errors', failed)
    redis.call('HINCRBY', key, model .. '|input', input)
    redis.call('HINCRBY', key, model .. '|cached', cached)
    redis.call('HINCRBY', key, model .. '|output', output)
    redis.call('HINCRBY', key, model .. '|cost', cost)
    redis.call('HSET', key, 'currency', currency)
    redis.call('PEXPIREAT', key, s + tonumber(ARGV[u + 11 + k]))
  end
  redis.call('SADD', prefix .. 'usage:tenants', tenant)
  redis.call('PEXPIRE', prefix .. 'usage:tenants', tonumber(ARGV[u + 14]))
end
return now
