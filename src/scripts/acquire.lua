-- acquire: takes a lock, and mints its fencing token: on a client of one node by a counter, on
-- each node of a RedLock by the clock.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence key
-- ARGV[1]  the token
-- ARGV[2]  ttl, ms
-- ARGV[3]  the fence key's ttl, ms: positive for one node's counter, negative for RedLock's clock
--          (its magnitude is the ttl); "0": no fence (lock_options::fence = false), the reply's
--          is 0
-- ARGV[4]  optional: the token of a lease that a holder of this process hands to its next local
--          waiter (local_queue::pass); a key that holds it counts as free ("" for none)
-- ARGV[5]  optional, with KEYS[3]: the id of the waiter that sends this try (one per lock call,
--          never a try's token), so that a release wakes it alone (release.lua); a key that
--          holds it was reserved for this waiter by that release, and counts as free
-- ARGV[6]  with ARGV[5]: the most its registration may live, ms (the time left of its wait)
-- ARGV[7]  with ARGV[5]: "1" when it may be registered already (a try after a lost one)
-- KEYS[3]  with ARGV[5]: the name's waiters, a sorted set of waiter id -> expiry (ms, server clock)
--
-- Replies  {1, fence}  the key was free (or handed over) and now holds the token for ttl
--          {0, PTTL}   another owner holds the key; PTTL -1 when the key has no TTL
--          WRONGTYPE   the lock key holds something other than a string (the GET of a refused
--                      SET makes it fail, not look held forever)
--
-- One node's fence is the fence key's INCR while that key lives, and the server's time in µs when
-- it starts anew (INCR answered 1: it was gone): strictly increasing per name on one server. The
-- fence key may expire (it lives a little longer than the lock) without leaving one key per lock
-- name forever: the fences it handed out are at most its start time plus one per acquisition,
-- and each acquisition takes the server more than a microsecond, so its clock has passed them
-- all when it starts again. Two commands (INCR, PEXPIRE) where the clock's way takes three and
-- four conversions: a quarter of the server's work for a whole lock cycle.
--
-- RedLock's fence is max(last + 1, server time in µs) on each node, so that every node's fence
-- follows the clock and the highest of any quorum rises with it: counters alone would drift apart
-- on nodes that miss acquisitions, and a later quorum could then answer lower. Lua numbers are
-- doubles, exact to 2^53, and µs since 1970 stay below that until the year 2255.
local held = nil
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  -- (a key of another type fails the GET: WRONGTYPE, not held forever)
  held = redis.call('GET', KEYS[1])
  if ARGV[4] and (held == ARGV[4] and ARGV[4] ~= '' or held == ARGV[5]) then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    held = nil
  end
end
if not held then
  if ARGV[7] == '1' then redis.call('ZREM', KEYS[3], ARGV[5]) end
  if ARGV[3] == '0' then return {1, 0} end
  local fence
  if string.byte(ARGV[3]) ~= 45 then  -- no '-': one node's counter
    fence = redis.call('INCR', KEYS[2])
    if fence == 1 then
      local t = redis.call('TIME')
      fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
      redis.call('SET', KEYS[2], string.format('%.0f', fence))
    end
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
  else
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    local last = tonumber(redis.call('GET', KEYS[2]) or '0')
    fence = math.max(last + 1, now)
    redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', string.sub(ARGV[3], 2))
  end
  return {1, fence}
end
local pttl = redis.call('PTTL', KEYS[1])
if ARGV[5] then
  -- Registered until the holder's key is due to expire and a second more (the waiter sleeps at
  -- most that long before it tries again, and registers anew), and never past its wait.
  local life = math.max(1, math.min(tonumber(ARGV[6]), math.max(pttl, 0) + 1000))
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + life,
             ARGV[5])
  if redis.call('PTTL', KEYS[3]) < life then redis.call('PEXPIRE', KEYS[3], life) end
end
return {0, pttl}
