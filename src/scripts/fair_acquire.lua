-- fair acquire: takes a fair lock, whose waiters queue in Redis in arrival order.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence key
-- KEYS[3]  the queue: a list of the waiting tokens, in arrival order
-- KEYS[4]  the queue's deadlines: a sorted set, token -> deadline in ms on the server's clock
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  the entry ttl, ms: how long a waiter keeps its place without trying again
--
-- Replies  {1, fence}          the key is ours: it holds our token (the release handed it to
--                              us), or it is free and the queue is empty or starts with us (a
--                              holder that expired hands nothing over: the head takes the key
--                              then). It is set for the ttl, we leave the queue, and the fence is
--                              minted as acquire.lua does for RedLock
--          {flag, t, holder}   else: we join the queue at its end, or keep our place, with the
--                              deadline now + entry ttl (both queue keys live that long); t is
--                              the holder's PTTL, at most a quarter of the entry ttl, so that we
--                              try again, and so keep our place, in time; holder is the token
--                              that holds the key ('' when it is free); flag is 2 when only
--                              waiters stand in the way (a free key, or one handed to a token
--                              still queued), else 0
--
-- Both fair scripts first drop the waiters whose deadline has passed: dead ones, or ones that
-- gave up without a word.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for i = 1, #dead do redis.call('LREM', KEYS[3], 1, dead[i]) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now) end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and (redis.call('LINDEX', KEYS[3], 0) or ARGV[1]) == ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if redis.call('ZREM', KEYS[4], ARGV[1]) == 1 then redis.call('LREM', KEYS[3], 1, ARGV[1]) end
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1,
                         tonumber(t[1]) * 1000000 + tonumber(t[2]))
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  return {1, fence}
end
local entry = tonumber(ARGV[4])
if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then redis.call('RPUSH', KEYS[3], ARGV[1]) end
redis.call('ZADD', KEYS[4], now + entry, ARGV[1])
redis.call('PEXPIRE', KEYS[3], entry)
redis.call('PEXPIRE', KEYS[4], entry)
local left = holder and redis.call('PTTL', KEYS[1]) or -2
local pause = math.floor(entry / 4)
if left < 0 or left > pause then left = pause end
-- who holds the key, so that the waiter can tell a holder from waiters that took it
local waiters_only = not holder or redis.call('ZSCORE', KEYS[4], holder)
return {waiters_only and 2 or 0, left, holder or ''}
