// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// fencing_token: why a lock alone cannot protect a resource, and how fencing tokens do (Martin
// Kleppmann, "How to do distributed locking", 2016). Writer A takes the lock, then pauses (a GC
// pause, a swapped-out page) past its TTL. The lock expires, writer B takes it and writes. A
// wakes up, still believing it holds the lock, and writes too. The storage refuses A's write,
// because A's fencing token is smaller than B's: every write carries its lease's token, and the
// storage (a Redis hash here, checked by a Lua script) keeps the largest one it has accepted.
//
// Run:    ./build/examples/fencing_token redis://127.0.0.1:6379
// Watch:  redis-cli monitor      (B's write is accepted, A's stale write is refused)
// Ctrl-C stops both writers.
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/redis/connection.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

// The protected resource. It accepts a write only if its fence is at least the largest it has
// seen, and answers {accepted, fence it now holds}. Any store with a compare-and-set can do this.
constexpr char const* guarded_write = R"lua(
local last = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) < last then return {0, last} end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return {1, tonumber(ARGV[1])}
)lua";

auto const start = std::chrono::steady_clock::now();

template <class... Args>
void say(char const* who, Args const&... what)
{
   auto const t = std::chrono::steady_clock::now() - start;
   std::cout << '[' << std::chrono::duration_cast<std::chrono::milliseconds>(t).count() << " ms] "
             << who << ": " << std::boolalpha;
   (std::cout << ... << what) << std::endl;
}

asio::awaitable<void> sleep(std::chrono::milliseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   co_await t.async_wait();
}

asio::awaitable<void> write(redis::connection& storage, char const* who, std::uint64_t fence)
{
   redis::request req;
   req.push("EVAL", guarded_write, 1, "fencing-demo:storage", fence, std::string{"by "} + who);
   redis::response<std::vector<std::uint64_t>> resp;
   co_await storage.async_exec(req, resp);
   auto const& r = std::get<0>(resp).value();
   if (r[0])
      say(who, "write with fence ", fence, " accepted");
   else
      say(who, "write with fence ", fence, " REFUSED: the storage is at fence ", r[1]);
}

// A: a one-second lease that is not renewed, and a pause of two seconds while holding it.
asio::awaitable<void> writer_a(locksmith::client& locks, redis::connection& storage)
{
   auto l = co_await locks.async_lock("examples/fencing", {.ttl = 1s, .renew = false});
   say("A", "took the lock, fencing token ", l.fencing_token());
   say("A", "checks held(): ", l.held(), ", goes ahead... and pauses for 2 s");
   co_await sleep(2s);
   say("A", "wakes up; held() would now say ", l.held(), ", but A does not look again");
   co_await write(storage, "A", l.fencing_token());
   // The key expired long ago, and B took and released it since: nothing to release.
   auto [ec] = co_await locks.async_unlock(l, asio::as_tuple);
   say("A", "unlock: ", ec.message());
}

// B: starts a little later, and waits for the lock (until A's key expires).
asio::awaitable<void> writer_b(locksmith::client& locks, redis::connection& storage)
{
   co_await sleep(200ms);
   say("B", "waits for the lock");
   auto body = [&](locksmith::lease& l) -> asio::awaitable<void> {
      say("B", "took the lock, fencing token ", l.fencing_token());
      co_await write(storage, "B", l.fencing_token());
   };
   auto [ec] = co_await locksmith::async_with_lock(locks, "examples/fencing", {.ttl = 10s}, body,
                                                   asio::as_tuple);
   say("B", ec ? "gave up: " + ec.message() : "released the lock");
}

asio::awaitable<int> co_main(example::context& ctx)
{
   // Two clients: two machines, each with its own connections (and its own in-process queue).
   auto& machine_b = ctx.another_client();
   auto& storage = ctx.data();
   // Both writers at once; should one fail, the other is cancelled. So is each on Ctrl-C.
   co_await (writer_a(ctx.locks, storage) && writer_b(machine_b, storage));
   co_return 0;
}
