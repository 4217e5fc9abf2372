-- One gateway replica's pending prefill tokens per endpoint, shared with the other replicas in one round trip.
-- KEYS[i]: the hash of endpoint i (field: replica id, value: "TOKENS|EXPIRES_AT_MS" on the server's clock)
-- ARGV[1]: this replica's id; ARGV[2]: the time-to-live in ms; ARGV[2 + i]: this replica's tokens at endpoint i
-- Returns, per endpoint, the sum of the other replicas' unexpired shares; expired ones are removed.
local now = now_ms()
local replica = ARGV[1]
local ttl = tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, replica, ARGV[2 + i] .. '|' .. (now + ttl))
  redis.call('PEXPIRE', key, ttl)
  local fields = redis.call('HGETALL', key)
  local others = 0
  for j = 1, #fields, 2 do
    if fields[j] ~= replica then
      local value = fields[j + 1]
      local bar = string.find(value, '|', 1, true)
      local expires = bar and tonumber(string.sub(value, bar + 1)) or 0
      if expires <= now then
        redis.call('HDEL', key, fields[j])
      else
        others = others + tonumber(string.sub(value, 1, bar - 1))
      end
    end
  end
  out[i] = others
end
return out
