-- reentrant release: gives back one hold on a reentrant lock.
--
-- KEYS[1]  the lock key (the owner's token)
-- KEYS[2]  the holds set (hold token -> expiry in ms on the server's clock)
-- ARGV[1]  the hold's token
-- ARGV[2]  the release channel
-- ARGV[3]  the owner's token
--
-- Replies  1   the hold was there and is removed; the last hold to go deletes both keys (if the
--              lock key is still the owner's) and publishes the release (the hold's token)
--          -1  the hold was gone (the expired holds are dropped first)
--
-- On a Redis Cluster the build makes its sharded twin, which publishes with SPUBLISH.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return -1 end
if redis.call('ZCARD', KEYS[2]) == 0 and redis.call('GET', KEYS[1]) == ARGV[3] then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
end
return 1
