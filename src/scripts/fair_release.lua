-- fair release: gives a fair lock back to the head of its queue, or leaves the queue.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the queue (list of waiting tokens)
-- KEYS[3]  the queue's deadlines (token -> deadline in ms on the server's clock)
-- ARGV[1]  the token
-- ARGV[2]  the release channel
-- ARGV[3]  the handoff prefix (detail::handoff_prefix, "to:")
--
-- Replies  1   we held the key: it is handed to the queue's head for as long as the head's entry
--              lives, and the prefix followed by the head's token published, which wakes that
--              waiter alone; with nobody waiting, the key is deleted and our token published
--          -1  we did not hold it (a waiter that gives up, or a holder whose key expired or was
--              handed on): we leave the queue, and if the key is free and someone waits, hand it
--              to the head in the same way, so that the next one need not wait for its next try
--
-- On a Redis Cluster the build makes its sharded twin, which publishes with SPUBLISH.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #dead do redis.call('LREM', KEYS[2], 1, dead[i]) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
if redis.call('ZREM', KEYS[3], ARGV[1]) == 1 then redis.call('LREM', KEYS[2], 1, ARGV[1]) end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return -1 end
local head = redis.call('LINDEX', KEYS[2], 0)
if head then
  local left = tonumber(redis.call('ZSCORE', KEYS[3], head)) - now
  redis.call('SET', KEYS[1], head, 'PX', math.max(1, left))
  redis.call('PUBLISH', ARGV[2], ARGV[3] .. head)
  if holder then return 1 end
  return -1
end
if not holder then return -1 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
