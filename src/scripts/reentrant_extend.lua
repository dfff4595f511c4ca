-- reentrant extend: renews one hold on a reentrant lock.
--
-- KEYS[1]  the lock key (the owner's token)
-- KEYS[2]  the fence key
-- KEYS[3]  the holds set (hold token -> expiry in ms on the server's clock)
-- ARGV[1]  the hold's token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  the owner's token
--
-- Replies  1   the key is the owner's and the hold has not expired: its expiry is now + ttl, the
--              fence key lives the fence key's ttl again, and the lock key and the set as long as
--              the longest hold
--          -1  else (the expired holds are dropped)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('GET', KEYS[1]) ~= ARGV[4] or not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return -1
end
redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
