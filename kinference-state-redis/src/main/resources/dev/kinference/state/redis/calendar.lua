-- Shared by every script (prepended): the store's clock and UTC calendar periods, as CalendarPeriod computes them.
local DAY = 86400000

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function civil_from_days(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m
end

-- The start and end (exclusive) in epoch ms of the period of kind code ('hour', 'day', 'week', 'month') holding t.
local function period(code, t)
  if code == 'hour' then
    local s = t - t % 3600000
    return s, s + 3600000
  end
  local days = math.floor(t / DAY)
  if code == 'day' then return days * DAY, (days + 1) * DAY end
  if code == 'week' then
    local s = days - (days + 3) % 7 -- 1970-01-01 was a Thursday; weeks start on Monday
    return s * DAY, (s + 7) * DAY
  end
  local y, m = civil_from_days(days)
  local ny, nm = y, m + 1
  if nm == 13 then ny, nm = y + 1, 1 end
  return days_from_civil(y, m, 1) * DAY, days_from_civil(ny, nm, 1) * DAY
end

local function bucket_width(length_ms)
  return math.max(1, math.floor(length_ms / 60))
end

-- Sum of a concurrency key's live leases (members 'lease|amount'), after dropping expired ones.
local function leases_held(key, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local sum = 0
  for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    sum = sum + tonumber(string.match(member, '|(%d+)$') or '0')
  end
  return sum
end
