-- fair requeue: the fair lock's step back, for a waiter that took the key on some nodes but not
-- on a quorum (or too late): it must not keep the key while it waits, nor lose its place.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the queue (list of waiting tokens)
-- KEYS[3]  the queue's deadlines (token -> deadline in ms on the server's clock)
-- ARGV[1]  the token
-- ARGV[2]  the entry ttl, ms
--
-- Replies  1   always. Where the token holds the key (it was the head of the queue there), the
--              key is deleted and the token put back at the head; elsewhere it is queued at the
--              end if it is not queued. Its deadline becomes now + entry ttl, and both queue
--              keys live that long. Waiters whose deadline has passed are dropped first, as in
--              fair_acquire.lua.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #dead do redis.call('LREM', KEYS[2], 1, dead[i]) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
local queued = redis.call('ZSCORE', KEYS[3], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if queued then redis.call('LREM', KEYS[2], 1, ARGV[1]) end
  redis.call('LPUSH', KEYS[2], ARGV[1])
elseif not queued then
  redis.call('RPUSH', KEYS[2], ARGV[1])
end
local entry = tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], now + entry, ARGV[1])
redis.call('PEXPIRE', KEYS[2], entry)
redis.call('PEXPIRE', KEYS[3], entry)
return 1
