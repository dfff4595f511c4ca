-- inspect: reads what the keys of one name hold, for client::async_inspect and `locksmith
-- status`, in one round trip. It writes nothing: the members and waiters whose time has passed,
-- which the other scripts drop, are skipped here, not removed.
--
-- KEYS[1]  the lock key: a string (the token of a lock's, a fair lock's or a writer's holder, or
--          a reentrant lock's owner), or a sorted set (a semaphore's holders, token -> expiry)
-- KEYS[2]  the fence key
-- KEYS[3]  the read-write lock's readers (token -> expiry)
-- KEYS[4]  the read-write lock's writer-waiting marker
-- KEYS[5]  the reentrant lock's holds (token -> expiry)
-- KEYS[6]  the fair lock's queue (a list of tokens)
-- KEYS[7]  the fair lock's queue deadlines (token -> deadline)
--
-- Replies  one flat array:
--          type     the lock key's TYPE: 'none', 'string', 'zset', or any other
--          pttl     the lock key's PTTL: -2 no key, -1 no TTL
--          value    the lock key's value when it is a string, else ''
--          fence    the fence key's value (the last fencing token minted), or ''
--          waiting  the writer-waiting marker's PTTL (-2: no writer waits)
--          then four lists, each its length n and n pairs (token, ms left), in this order: the
--          lock key's members when it is a sorted set, the readers, the holds (each by expiry),
--          and the fair queue's waiters (in queue order; ms left: until their deadline)
-- Times are on the server's clock, in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kind = redis.call('TYPE', KEYS[1])['ok']
local out = {kind, redis.call('PTTL', KEYS[1]), '', redis.call('GET', KEYS[2]) or '',
             redis.call('PTTL', KEYS[4])}
if kind == 'string' then out[3] = redis.call('GET', KEYS[1]) end

-- The live members of a sorted set, appended as n, then (token, ms left) pairs.
local function members(key, live)
  local m = live and redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES') or {}
  out[#out + 1] = #m / 2
  for i = 1, #m, 2 do
    out[#out + 1] = m[i]
    out[#out + 1] = math.floor(tonumber(m[i + 1]) - now)
  end
end
members(KEYS[1], kind == 'zset')
members(KEYS[3], true)
members(KEYS[5], true)

local queued = redis.call('LRANGE', KEYS[6], 0, -1)
local at = #out + 1
out[at] = 0
for i = 1, #queued do
  local deadline = tonumber(redis.call('ZSCORE', KEYS[7], queued[i]) or '0')
  if deadline > now then
    out[at] = out[at] + 1
    out[#out + 1] = queued[i]
    out[#out + 1] = math.floor(deadline - now)
  end
end
return out
