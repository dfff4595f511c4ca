-- acquire: takes a lock on a client of one node, and mints its fencing token.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence key
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  optional: the token of a lease that a holder of this process hands to its next local
--          waiter (local_queue::pass); a key that holds it counts as free
--
-- Replies  {1, fence}  the key was free (or handed over) and now holds the token for ttl
--          {0, PTTL}   another owner holds the key; PTTL -1 when the key has no TTL
--          WRONGTYPE   the lock key holds something other than a string (the GET on the way out
--                      makes it fail, not look held forever)
--
-- The fence is the fence key's INCR while that key lives, and the server's time in µs when it
-- starts anew (INCR answered 1: it was gone): strictly increasing per name on one server. The
-- fence key may expire (it lives a little longer than the lock) without leaving one key per lock
-- name forever: the fences it handed out are at most its start time plus one per acquisition,
-- and each acquisition takes the server more than a microsecond, so its clock has passed them
-- all when it starts again. Two commands (INCR, PEXPIRE) where the clock's way (quorum_acquire)
-- takes three and four conversions: a quarter of the server's work for a whole lock cycle.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or (ARGV[4] and
    redis.call('GET', KEYS[1]) == ARGV[4] and
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])) then
  local fence = redis.call('INCR', KEYS[2])
  if fence == 1 then
    local t = redis.call('TIME')
    fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
    redis.call('SET', KEYS[2], string.format('%.0f', fence))
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {1, fence}
end
redis.call('GET', KEYS[1])
return {0, redis.call('PTTL', KEYS[1])}
