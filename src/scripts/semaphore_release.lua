-- semaphore release: gives back a permit of a semaphore, or a reader's place.
--
-- KEYS[1]  the holder set (token -> expiry in ms on the server's clock)
-- ARGV[1]  the token
-- ARGV[2]  the release channel
--
-- Replies  1   the token was a member: removed, and the release published (the message is the
--              token)
--          -1  it was no member, or it had expired: an expired member is still there when
--              nobody pruned since, and counts as gone (it is removed, and the release published,
--              all the same)
--
-- On a Redis Cluster the build makes its sharded twin, which publishes with SPUBLISH.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return -1 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
if tonumber(expiry) <= now then return -1 end
return 1
