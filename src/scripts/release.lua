-- release: gives a lock back (also the read-write lock's writer).
--
-- KEYS[1]  the lock key
-- KEYS[2]  optional: the name's waiters, a sorted set of waiter id -> expiry (ms, server clock)
--          that acquire.lua keeps
-- ARGV[1]  the token, or a waiter id that leaves the waiters (it never holds the key)
-- ARGV[2]  the release channel
-- ARGV[3]  with KEYS[2]: the prefix of a message that names one waiter (detail::handoff_prefix)
-- ARGV[4]  optional, with KEYS[2]: "quiet" when the releaser tries again by itself (a split
--          vote's loser, which draws lots): the key is deleted, and nobody is woken or named
--
-- Replies  1   the key held the token: deleted, and the release published. With waiters
--              registered, the message is the prefix and the id of the one whose registration
--              ends first, taken out of the set: it alone tries (the others wait for their
--              turn, or for the holder's key to expire, as after a lost message), so a release
--              wakes one process, not every one. A waiter id "ID:TAG" is published on its
--              process's own channel, the release channel and ":TAG" (detail::waiter_channel),
--              to which only that process listens: the others are not even woken to read it. An
--              id without a tag is published on the release channel. With none registered, the
--              message is the token on the release channel, the same on every node, so that a
--              waiter counts one release once.
--          A quiet release publishes nothing: under RedLock, a loser's keys freed with a message
--          woke the next waiter, whose try then lost to the winner's quorum, and freed its own
--          keys with a message in turn, a chain of lost tries until the winner's release. The
--          loser's own next try keeps the name moving instead.
--          0   another token holds the key
--          -1  there is no key (it expired)
--
-- On a Redis Cluster the build makes its sharded twin, which publishes with SPUBLISH.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[4] == 'quiet' then return 1 end
  local message, channel = ARGV[1], ARGV[2]
  if KEYS[2] then
    local w = redis.call('ZPOPMIN', KEYS[2])
    if w[1] then
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      while w[1] and tonumber(w[2]) < now do w = redis.call('ZPOPMIN', KEYS[2]) end
      if w[1] then
        message = ARGV[3] .. w[1]
        local tag = string.match(w[1], ':([^:]+)$')
        if tag then channel = channel .. ':' .. tag end
      end
    end
  end
  redis.call('PUBLISH', channel, message)
  return 1
end
if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
if v then return 0 end
return -1
