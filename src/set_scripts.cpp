// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/set_scripts.hpp>

#include <map>
#include <memory>
#include <string>

namespace locksmith::detail {
namespace {

// Each script starts from the server's clock, in ms and in µs (for the fence), and drops the
// members of the holder set (`set`, a key) whose expiry has passed.
std::string prelude(std::string_view set)
{
   return "local t = redis.call('TIME')\n"
          "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
          "redis.call('ZREMRANGEBYSCORE', " +
          std::string{set} + ", '-inf', now)\n";
}

// Mints the fence as the lock's acquire script does, max(last + 1, server time in µs), into the
// fence key KEYS[2] kept ARGV[3] ms, and answers {1, fence}.
constexpr std::string_view mint_fence = R"lua(
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1,
                       tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
return {1, fence}
)lua";

// The set key lives as long as its longest member.
constexpr std::string_view keep_set = R"lua(
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
)lua";

// The time until the first member of the set `set` (a key) expires, into `left` (nil for an
// empty set).
std::string first_expiry(std::string_view set)
{
   return "local first = redis.call('ZRANGE', " + std::string{set} +
          ", 0, 0, 'WITHSCORES')\nlocal left = first[2] and (tonumber(first[2]) - now)\n";
}

std::string set_acquire_text()
{
   return R"lua(
for i = 3, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left ~= -2 then return {0, left} end
end
)lua" + prelude("KEYS[1]") +
          "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then\n" + first_expiry("KEYS[1]") +
          "  return {0, left}\nend\n" +
          "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])\n" +
          std::string{keep_set} + std::string{mint_fence};
}

std::string set_extend_text()
{
   return prelude("KEYS[1]") + R"lua(
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
)lua" + std::string{keep_set} +
          "return 1\n";
}

// An expired member is still there when nobody pruned since; it counts as gone.
constexpr std::string_view set_release_text = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return -1 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
if tonumber(expiry) <= now then return -1 end
return 1
)lua";

// A key of another kind (a semaphore's set) fails the GET with WRONGTYPE, as the lock's script
// does, instead of being waited for.
std::string write_acquire_text()
{
   return prelude("KEYS[3]") + R"lua(
local readers = redis.call('ZCARD', KEYS[3])
if readers == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('DEL', KEYS[4])
)lua" + std::string{mint_fence} +
          "end\nredis.call('GET', KEYS[1])\nredis.call('SET', KEYS[4], '1', 'PX', ARGV[4])\n" +
          first_expiry("KEYS[3]") +
          R"lua(
if readers == 0 then left = redis.call('PTTL', KEYS[1]) end
local pause = tonumber(ARGV[5])
if left < 0 or left > pause then left = pause end
return {0, left}
)lua";
}

// The reentrant lock's holds: a sorted set of attempt token -> expiry beside the lock key, whose
// value is the owner's token. The lock key and the set live as long as the longest hold.
constexpr std::string_view keep_lock = R"lua(
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
)lua";

std::string reentrant_acquire_text()
{
   return R"lua(
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[4] then return {0, redis.call('PTTL', KEYS[1])} end
)lua" + prelude("KEYS[3]") +
          "if not owner then redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[2]) end\n"
          "redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])\n" +
          std::string{keep_lock} + std::string{mint_fence};
}

std::string reentrant_extend_text()
{
   return prelude("KEYS[3]") + R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[4] or not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return -1
end
redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
)lua" + std::string{keep_lock} +
          "return 1\n";
}

// The last hold to go deletes the lock key and tells the waiters.
std::string reentrant_release_text()
{
   return prelude("KEYS[2]") + R"lua(
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return -1 end
if redis.call('ZCARD', KEYS[2]) == 0 and redis.call('GET', KEYS[1]) == ARGV[3] then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
end
return 1
)lua";
}

// The fair lock's queue: the list of waiting tokens in arrival order (`queue`, a key) and their
// deadlines (`deadlines`). Starts from the server's clock, as prelude(), and drops the waiters
// whose deadline has passed: dead ones, or ones that gave up without a word.
std::string queue_prelude(std::string_view queue, std::string_view deadlines)
{
   std::string const q{queue};
   std::string const d{deadlines};
   return "local t = redis.call('TIME')\n"
          "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
          "local dead = redis.call('ZRANGEBYSCORE', " +
          d + ", '-inf', now)\nfor i = 1, #dead do redis.call('LREM', " + q +
          ", 1, dead[i]) end\n"
          "if #dead > 0 then redis.call('ZREMRANGEBYSCORE', " +
          d + ", '-inf', now) end\n";
}

// Takes the token out of the queue, if it is in it.
std::string leave_queue(std::string_view queue, std::string_view deadlines)
{
   return "if redis.call('ZREM', " + std::string{deadlines} +
          ", ARGV[1]) == 1 then redis.call('LREM', " + std::string{queue} + ", 1, ARGV[1]) end\n";
}

std::string fair_acquire_text()
{
   // Ours when the release handed the key to us, or when it is free and nobody waits before us
   // (a holder that expired hands nothing over: the head of the queue takes the key then).
   return queue_prelude("KEYS[3]", "KEYS[4]") + R"lua(
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and (redis.call('LINDEX', KEYS[3], 0) or ARGV[1]) == ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
)lua" + leave_queue("KEYS[3]", "KEYS[4]") +
          std::string{mint_fence} + R"lua(
end
local entry = tonumber(ARGV[4])
if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then redis.call('RPUSH', KEYS[3], ARGV[1]) end
redis.call('ZADD', KEYS[4], now + entry, ARGV[1])
redis.call('PEXPIRE', KEYS[3], entry)
redis.call('PEXPIRE', KEYS[4], entry)
local left = holder and redis.call('PTTL', KEYS[1]) or -2
local pause = math.floor(entry / 4)
if left < 0 or left > pause then left = pause end
-- 2: only waiters in the way (a free key, or one handed to a token that has not taken it yet);
-- and who holds the key, so that the waiter can tell a holder from waiters that took it
local waiters_only = not holder or redis.call('ZSCORE', KEYS[4], holder)
return {waiters_only and 2 or 0, left, holder or ''}
)lua";
}

// A holder hands the key to the head of the queue, for as long as the head's entry lives, and
// wakes it alone; a waiter that gives up leaves the queue (-1), and hands a free key on in the
// same way if it was first in line, so that the next one need not wait for its next try.
std::string fair_release_text()
{
   return queue_prelude("KEYS[2]", "KEYS[3]") + leave_queue("KEYS[2]", "KEYS[3]") + R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return -1 end
local head = redis.call('LINDEX', KEYS[2], 0)
if head then
  local left = tonumber(redis.call('ZSCORE', KEYS[3], head)) - now
  redis.call('SET', KEYS[1], head, 'PX', math.max(1, left))
  redis.call('PUBLISH', ARGV[2], ARGV[3] .. head)
  if holder then return 1 end
  return -1
end
if not holder then return -1 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
)lua";
}

std::string fair_requeue_text()
{
   return queue_prelude("KEYS[2]", "KEYS[3]") + R"lua(
local queued = redis.call('ZSCORE', KEYS[3], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if queued then redis.call('LREM', KEYS[2], 1, ARGV[1]) end
  redis.call('LPUSH', KEYS[2], ARGV[1])
elseif not queued then
  redis.call('RPUSH', KEYS[2], ARGV[1])
end
local entry = tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], now + entry, ARGV[1])
redis.call('PEXPIRE', KEYS[2], entry)
redis.call('PEXPIRE', KEYS[3], entry)
return 1
)lua";
}

// Each script is built once, at its first use, and its text stays for the program's life.
template <std::string (*Text)()>
script const& built_once(std::string_view name, script_role role)
{
   static std::string const text = Text();
   static script const s{name, text, sha1_hex(text), role};
   return s;
}

std::string set_release_string()
{
   return std::string{set_release_text};
}

}  // namespace

script const& set_acquire_script()
{
   return built_once<set_acquire_text>("semaphore acquire", script_role::acquire);
}

script const& set_extend_script()
{
   return built_once<set_extend_text>("semaphore extend", script_role::extend);
}

script const& set_release_script()
{
   return built_once<set_release_string>("semaphore release", script_role::release);
}

script const& write_acquire_script()
{
   return built_once<write_acquire_text>("write acquire", script_role::acquire);
}

script const& fair_acquire_script()
{
   return built_once<fair_acquire_text>("fair acquire", script_role::acquire);
}

script const& fair_release_script()
{
   return built_once<fair_release_text>("fair release", script_role::release);
}

script const& fair_requeue_script()
{
   return built_once<fair_requeue_text>("fair requeue", script_role::release);
}

script const& reentrant_acquire_script()
{
   return built_once<reentrant_acquire_text>("reentrant acquire", script_role::acquire);
}

script const& reentrant_extend_script()
{
   return built_once<reentrant_extend_text>("reentrant extend", script_role::extend);
}

script const& reentrant_release_script()
{
   return built_once<reentrant_release_text>("reentrant release", script_role::release);
}

std::vector<script const*> every_script()
{
   auto const lock = all_scripts();
   std::vector<script const*> all{lock.begin(), lock.end()};
   for (auto const* s : {&set_acquire_script(), &set_extend_script(), &set_release_script(),
                         &write_acquire_script(), &fair_acquire_script(), &fair_release_script(),
                         &fair_requeue_script(), &reentrant_acquire_script(),
                         &reentrant_extend_script(), &reentrant_release_script()})
      all.push_back(s);
   return all;
}

namespace {

// Every script's sharded twin, built together once (a magic static: clients on several threads
// may ask at once), for the program's life.
struct sharded_twins {
   std::vector<std::unique_ptr<std::string const>> texts;
   std::vector<std::unique_ptr<script const>> scripts;
   std::map<script const*, script const*> of;

   sharded_twins()
   {
      for (auto const* s : every_script()) {
         auto text = std::make_unique<std::string const>(sharded_text(s->text));
         if (*text == s->text) {
            of[s] = s;
            continue;
         }
         auto twin = std::make_unique<script const>(
            script{s->name, *text, sha1_hex(*text), s->role, s->batched});
         of[s] = twin.get();
         texts.push_back(std::move(text));
         scripts.push_back(std::move(twin));
      }
   }
};

sharded_twins const& twins()
{
   static sharded_twins const t;
   return t;
}

}  // namespace

script const& sharded_twin(script const& s)
{
   auto const& of = twins().of;
   auto const it = of.find(&s);
   return it == of.end() ? s : *it->second;
}

std::vector<script const*> every_sharded_script()
{
   std::vector<script const*> out;
   for (auto const& s : twins().scripts)
      out.push_back(s.get());
   return out;
}

}  // namespace locksmith::detail
