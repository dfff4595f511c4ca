-- write acquire: takes a read-write lock's writer side. Its lease is then renewed and released
-- as a lock's (extend.lua, release.lua).
--
-- KEYS[1]  the lock key (the writer's)
-- KEYS[2]  the fence key
-- KEYS[3]  the readers set (token -> expiry in ms on the server's clock)
-- KEYS[4]  the writer-waiting marker
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  the writer-waiting marker's ttl, ms
-- ARGV[5]  the longest pause, ms
--
-- Replies  {1, fence}  no unexpired reader remains and the lock key was free: it holds the token
--                      for ttl, the marker is cleared, and the fence is minted as
--                      acquire.lua does for RedLock
--          {0, t}      else: sets the marker for its ttl, which stops new readers; t is the time
--                      until the holder's key or the first reader expires, at most the longest
--                      pause, so that a waiting writer tries again (and keeps the marker set)
--                      before the marker expires
--          WRONGTYPE   a key of another kind (a semaphore's set) holds the lock key: it fails
--                      the GET, as in acquire.lua, instead of being waited for
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local readers = redis.call('ZCARD', KEYS[3])
if readers == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('DEL', KEYS[4])
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1,
                         tonumber(t[1]) * 1000000 + tonumber(t[2]))
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  return {1, fence}
end
redis.call('GET', KEYS[1])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[4])
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
local left = first[2] and (tonumber(first[2]) - now)
if readers == 0 then left = redis.call('PTTL', KEYS[1]) end
local pause = tonumber(ARGV[5])
if left < 0 or left > pause then left = pause end
return {0, left}
