-- semaphore extend: renews a permit of a semaphore, or a reader's place.
--
-- KEYS[1]  the holder set (token -> expiry in ms on the server's clock)
-- KEYS[2]  the fence key
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
--
-- Replies  1   the token was a member that had not expired: its expiry is now + ttl, the fence
--              key lives the fence key's ttl again, and the set as long as its longest member
--          -1  it was no member, or had expired (the expired members are removed)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
