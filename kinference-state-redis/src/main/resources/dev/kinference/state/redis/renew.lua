-- Renews leases. KEYS: concurrency counters; ARGV: lease ms, then one member ('lease|amount') per key.
local now = now_ms()
local lease_ms = tonumber(ARGV[1])
local renewed = 0
for i = 1, #KEYS do
  renewed = renewed + redis.call('ZADD', KEYS[i], 'XX', 'CH', now + lease_ms, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], lease_ms * 2)
end
return renewed
