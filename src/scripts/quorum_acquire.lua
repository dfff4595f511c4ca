-- quorum acquire: takes a lock on one node of a RedLock, and mints its fencing token.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence key
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms
-- ARGV[4]  optional: the token of a lease handed over in this process (local_queue::pass); a key
--          that holds it counts as free
--
-- Replies  {1, fence}  the key was free (or handed over) and now holds the token for ttl
--          {0, PTTL}   another owner holds the key; PTTL -1 when the key has no TTL
--          WRONGTYPE   the lock key holds something other than a string
--
-- The fence is max(last + 1, server time in µs) on each node, so that every node's fence follows
-- the clock and the highest of any quorum rises with it: counters alone (acquire.lua) would drift
-- apart on nodes that miss acquisitions, and a later quorum could then answer lower. Lua numbers
-- are doubles, exact to 2^53, and µs since 1970 stay below that until the year 2255.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or (ARGV[4] and
    redis.call('GET', KEYS[1]) == ARGV[4] and
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])) then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  local fence = math.max(last + 1, now)
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  return {1, fence}
end
redis.call('GET', KEYS[1])
return {0, redis.call('PTTL', KEYS[1])}
