-- reentrant acquire: takes a hold on a reentrant lock. The lock key's value is the owner's token;
-- beside it, the holds set: hold token -> expiry in ms on the server's clock. The lock key and the
-- set live as long as the longest hold.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence key
-- KEYS[3]  the holds set
-- ARGV[1]  the hold's token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  the owner's token
--
-- Replies  {1, fence}  the lock key was free or the owner's: it holds the owner's token, the hold
--                      joined the set with expiry now + ttl (the expired holds dropped first),
--                      both keys live as long as the longest hold, and the fence is minted as
--                      acquire.lua does for RedLock
--          {0, PTTL}   another owner holds the key
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[4] then return {0, redis.call('PTTL', KEYS[1])} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if not owner then redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[2]) end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1,
                       tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
return {1, fence}
