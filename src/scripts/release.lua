-- release: gives a lock back (also the read-write lock's writer).
--
-- KEYS[1]  the lock key
-- KEYS[2]  optional: the name's waiters, a sorted set of waiter id -> expiry (ms, server clock)
--          that acquire.lua keeps
-- ARGV[1]  the token, or a waiter id that leaves the waiters (a key that holds it was reserved
--          for that waiter, below, and is released as a holder's)
-- ARGV[2]  the release channel
-- ARGV[3]  with KEYS[2]: the prefix of a message that names one waiter (detail::handoff_prefix)
-- ARGV[4]  with KEYS[2]: how long the key stays reserved for the waiter that a release names, ms
-- ARGV[5]  optional, with KEYS[2]: "quiet" when the releaser tries again by itself (a split
--          vote's loser, which draws lots): the key is deleted, and nobody is woken or named
-- ARGV[6]  optional, with "quiet": the id of the waiter whose try took the key, which registers
--          among the waiters (as acquire.lua registers a try that loses): else it is missing
--          here alone, and a release here would name another waiter than the other nodes do
-- ARGV[7]  with ARGV[6]: the most its registration may live, ms
--          ARGV[5] may instead be "handed", for the release of a lease that took its key over
--          from another lease of this process (local_queue::pass): ARGV[6] is that lease's token.
--          A key that still holds it (a failover lost the takeover's SET) is this lease's, and
--          nobody else's: released as if it held ARGV[1], by the same call.
--
-- Replies  1   the key held the token: deleted, and the release published. With waiters
--              registered, the message is the prefix and the least id among those whose
--              registration has not ended (the one that has waited longest), taken out of the
--              set: it alone tries (the others wait for their
--              turn, or for the holder's key to expire, as after a lost message), so a release
--              wakes one process, not every one. The key is not deleted then: it holds the
--              named waiter's id for ARGV[4] ms, which that waiter's try takes as free
--              (acquire.lua) and anyone else's as held, so that an arrival, which may barge
--              into a free key, cannot take the name from under the waiter that was woken for
--              it (whose try would then lose: the herd in another form). A named waiter that
--              is gone holds the name that long, and one that leaves releases it as its
--              holder (ARGV[1]). A waiter id "ID:TAG" is published on its
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
if v == ARGV[1] or (ARGV[5] == 'handed' and v == ARGV[6]) then
  if ARGV[5] == 'quiet' then
    redis.call('DEL', KEYS[1])
    if ARGV[6] then
      local life = tonumber(ARGV[7])
      local t = redis.call('TIME')
      redis.call('ZADD', KEYS[2],
                 tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + life, ARGV[6])
      if redis.call('PTTL', KEYS[2]) < life then redis.call('PEXPIRE', KEYS[2], life) end
    end
    return 1
  end
  local message, channel = ARGV[1], ARGV[2]
  -- The least id among the registrations that have not ended: ids begin with the time the
  -- waiter first registered (waiter_id), so every node of a RedLock names the same waiter, the
  -- one that has waited longest. All are popped (ZPOPMIN, which the lock's ACL recipe allows),
  -- and the live ones but that one put back, the set living as long as the longest of them.
  -- Most releases find no set: a PTTL of -2 (no key) says so at less cost than a ZPOPMIN's empty
  -- reply made a Lua table (INFO commandstats, the whole script: 2.7 us against 3.1). One that
  -- finds waiters pays the PTTL on top, a command among the dozen of a handoff.
  local w = nil
  local all = {}
  if KEYS[2] and redis.call('PTTL', KEYS[2]) ~= -2 then
    all = redis.call('ZPOPMIN', KEYS[2], 2147483647)
  end
  if #all > 0 then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for i = 1, #all, 2 do
      if tonumber(all[i + 1]) >= now and (not w or all[i] < w) then w = all[i] end
    end
    local back, longest = {}, now
    for i = 1, #all, 2 do
      local ends = tonumber(all[i + 1])
      if ends >= now and all[i] ~= w then
        back[#back + 1] = all[i + 1]
        back[#back + 1] = all[i]
        longest = math.max(longest, ends)
      end
    end
    for i = 1, #back, 512 do
      redis.call('ZADD', KEYS[2], unpack(back, i, math.min(i + 511, #back)))
    end
    if #back > 0 then redis.call('PEXPIRE', KEYS[2], math.max(1, longest - now)) end
  end
  if w then
    redis.call('SET', KEYS[1], w, 'PX', ARGV[4])
    message = ARGV[3] .. w
    local tag = string.match(w, ':([^:]+)$')
    if tag then channel = channel .. ':' .. tag end
  else
    redis.call('DEL', KEYS[1])
  end
  redis.call('PUBLISH', channel, message)
  return 1
end
if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
if v then return 0 end
return -1
