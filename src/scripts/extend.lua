-- extend: renews any number of leases in one call, so that the watchdog renews the leases that
-- fall due together with one request per node (also the fair lock's and the writer's).
--
-- For lease i, in the order of the call:
-- KEYS[2i-1]  its lock key
-- KEYS[2i]    its fence key
-- ARGV[3i-2]  its token
-- ARGV[3i-1]  ttl, ms
-- ARGV[3i]    the fence key's ttl, ms
--
-- Replies  an array with one entry per lease:
--          1   the lock key held the token: its TTL is ttl again, and the fence key's (if it
--              exists) the fence key's ttl, so that however long a lease is held, the next fence
--              follows the stored one
--          0   another token, or a value of another type, holds the key (pcall: one such key
--              must not fail the other leases of the call)
--          -1  there is no key
local out = {}
for i = 1, #KEYS / 2 do
  local lock, a = KEYS[2 * i - 1], 3 * i - 2
  local v = redis.pcall('GET', lock)
  if v == ARGV[a] then
    redis.call('PEXPIRE', lock, ARGV[a + 1])
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[a + 2])
    out[i] = 1
  elseif v then
    out[i] = 0
  else
    out[i] = -1
  end
end
return out
