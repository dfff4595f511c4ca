-- release: gives a lock back (also the read-write lock's writer).
--
-- KEYS[1]  the lock key
-- ARGV[1]  the token
-- ARGV[2]  the release channel
--
-- Replies  1   the key held the token: deleted, and the release published (the message is the
--              token, the same on every node, so that a waiter counts one release once)
--          0   another token holds the key
--          -1  there is no key (it expired)
--
-- On a Redis Cluster the build makes its sharded twin, which publishes with SPUBLISH.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
if v then return 0 end
return -1
