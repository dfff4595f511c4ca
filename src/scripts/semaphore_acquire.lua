-- semaphore acquire: takes a permit of a semaphore, or a reader's place in a read-write lock.
-- The holders are the members of a sorted set, token -> expiry in ms on the server's clock.
--
-- KEYS[1]   the holder set
-- KEYS[2]   the fence key
-- KEYS[3..] keys that bar entry while they exist (a reader's: the writer's lock key and the
--           writer-waiting marker); none for a semaphore
-- ARGV[1]   the token
-- ARGV[2]   ttl, ms
-- ARGV[3]   the fence key's ttl, ms
-- ARGV[4]   permits
--
-- Replies  {1, fence}  the token joined the set with expiry now + ttl; the set lives as long as
--                      its longest member; the fence is minted as acquire.lua does for RedLock,
--                      max(last + 1, server time in µs)
--          {0, t}      a barring key exists (t: its PTTL), or `permits` members remain once the
--                      expired ones are dropped (t: the time until the first of them expires)
--
-- Dropping the expired members first is how a crashed holder's permit comes back.
for i = 3, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left ~= -2 then return {0, left} end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local left = first[2] and (tonumber(first[2]) - now)
  return {0, left}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1,
                       tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
return {1, fence}
