// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The floor: the two round trips of a lock done by hand, `SET key val NX PX 30000` and `DEL key`,
// on one Boost.Redis connection, with no script, no token check and no fencing; for the handoff,
// a release that also PUBLISHes, and waiters that sleep until the message. With
// run_spec::checked_floor, the release is a script that checks the token (checked_release): the
// floor of any lock that does.
#include "scenarios.hpp"
#include "tokens.hpp"

#include "transport/redis_config.hpp"

#include "sansio/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancel_after.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/consign.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>

#include <algorithm>
#include <memory>
#include <optional>

namespace locksmith::bench {
namespace asio = boost::asio;
namespace redis = boost::redis;

namespace {

// The least a release that checks its token does: deletes the key only if it holds the token,
// and in the handoff publishes then. Replies 1 as DEL does, or 0 (another's, or none).
constexpr char const* checked_release =
   R"(if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[2] then redis.call('PUBLISH', ARGV[2], '') end
return 1)";

// The release of `key`: DEL, or with the checked release's SHA1 (`sha`, not empty) an EVALSHA of
// it, which PUBLISHes on `channel` if given.
void push_release(redis::request& req, std::string const& key, std::string const& sha,
                  std::string const* channel = nullptr)
{
   if (sha.empty()) {
      req.push("DEL", key);
      if (channel)
         req.push("PUBLISH", *channel, "");
   } else if (channel) {
      req.push("EVALSHA", sha, 1, key, "raw", *channel);
   } else {
      req.push("EVALSHA", sha, 1, key, "raw");
   }
}

// Why a release failed, if it did: its first reply must be 1 (DEL's count, the checked
// release's verdict). An error reply (a NOSCRIPT) is the reply's, not the exec's.
template <class Response>
std::optional<std::string> release_failure(error_code ec, Response const& r)
{
   auto const& first = std::get<0>(r);
   if (ec)
      return ec.message();
   if (!first.has_value())
      return first.error().diagnostic;
   if (first.value() != 1)
      return "the key was not held";
   return std::nullopt;
}

asio::awaitable<void> raw_worker(process_ctx& c, redis::connection& conn, worker& w,
                                 std::string const& release_sha)
{
   // The same key shape as the library's, so that the server does the same hashing work.
   auto const key = c.spec.prefix + "{" + w.name + "}";
   redis::request set;
   set.push("SET", key, "raw", "NX", "PX", "30000");
   redis::request del;
   push_release(del, key, release_sha);
   redis::response<std::optional<std::string>> set_resp;
   redis::response<long long> del_resp;
   while (!stopping(c)) {
      auto const start = now_ns();
      w.locking = true;  // an unreachable server must not keep us past the stop
      auto [ec, n] = co_await conn.async_exec(
         set, set_resp, asio::bind_cancellation_slot(w.cancel.slot(), use_tuple));
      w.locking = false;
      auto const acquired = now_ns();
      auto const& taken = std::get<0>(set_resp);
      if (ec == asio::error::operation_aborted && stopping(c))
         break;
      if (ec || !taken.has_value() || !taken.value()) {
         fail(c, "SET NX: " + (ec ? ec.message() : std::string{"not set"}));
         co_await sleep_for(10ms);
         continue;
      }
      bool const counted = measuring(c);
      enter_critical(c, w, start, acquired, counted);
      leave_critical(c, w);
      auto [dec, dn] = co_await conn.async_exec(del, del_resp, use_tuple);
      if (auto const failed = release_failure(dec, del_resp))
         fail(c, "release: " + *failed);
      if (counted)
         c.result.cycle_ns.push_back(now_ns() - start);
   }
}

// What the connection's push loop shares with the handoff workers of the process.
struct push_state {
   redis::resp3::flat_tree resp;  // whole pushes only: clear() keeps one still being read
   std::uint64_t messages = 0;
   std::vector<asio::steady_timer*> sleepers;  // woken by a message
   int subscribers = 0;                        // workers that want the channel (one per process)
};

// Counts the channel's messages and wakes the sleepers; always reading, so that unread pushes
// never stall the replies behind them.
asio::awaitable<void> receive_pushes(std::shared_ptr<redis::connection> conn,
                                     std::shared_ptr<push_state> p)
{
   for (;;) {
      auto [ec] = co_await conn->async_receive2(use_tuple);
      if (ec)
         co_return;
      auto const& nodes = p->resp;
      for (std::size_t i = 0; i + 2 < nodes.size(); ++i)
         if (nodes[i].depth == 0 && nodes[i].aggregate_size == 3 && nodes[i + 1].value == "message")
            ++p->messages;
      p->resp.clear();
      for (auto* t : p->sleepers)
         t->cancel();
   }
}

// The requests of a raw handoff worker.
struct raw_requests {
   redis::request set, release, subscribe, unsubscribe;
};

// SET NX until it succeeds, as the library waits: after a failed try, subscribe to the release
// channel and try again at once, then sleep until a message (or 100 ms, should one be missed).
// False at the stop or on an error. `subscribed` says whether to unsubscribe afterwards.
asio::awaitable<bool> raw_acquire(process_ctx& c, redis::connection& conn, push_state& p, worker& w,
                                  std::shared_ptr<raw_requests const> req, bool& subscribed)
{
   redis::response<std::optional<std::string>> resp;
   for (;;) {
      auto const seen = p.messages;
      w.locking = true;
      auto [ec, n] = co_await conn.async_exec(
         req->set, resp, asio::bind_cancellation_slot(w.cancel.slot(), use_tuple));
      w.locking = false;
      if (ec || !std::get<0>(resp).has_value()) {
         if (!stopping(c))
            fail(c, "SET NX: " + (ec ? ec.message() : std::get<0>(resp).error().diagnostic));
         co_return false;
      }
      if (std::get<0>(resp).value())
         co_return true;
      if (stopping(c))
         co_return false;
      if (!subscribed) {
         // Commands on a connection run in order: the retry runs after the subscription.
         if (p.subscribers++ == 0)
            conn.async_exec(req->subscribe, redis::ignore, asio::consign(asio::detached, req));
         subscribed = true;
         continue;
      }
      if (p.messages != seen)
         continue;  // released while our try was in flight
      asio::steady_timer t{c.io, 100ms};
      p.sleepers.push_back(&t);
      co_await t.async_wait(use_tuple);
      p.sleepers.erase(std::find(p.sleepers.begin(), p.sleepers.end(), &t));
   }
}

// A handoff with no library: the waiter tries SET NX and sleeps until a message on a channel
// that it subscribes to only while it waits (as the library does, so that a process that does
// not wait is not woken); the holder releases with DEL and PUBLISH in one round trip (or the
// checked release, which publishes).
asio::awaitable<void> raw_handoff_worker(process_ctx& c, redis::connection& conn, push_state& p,
                                         worker& w, std::string const& release_sha)
{
   auto const key = c.spec.prefix + "{" + w.name + "}";
   auto const channel = key + ":raw-released";
   // Shared with the (un)subscriptions in flight, which may outlive this coroutine at the stop.
   auto req = std::make_shared<raw_requests>();
   req->set.push("SET", key, "raw", "NX", "PX", "30000");
   push_release(req->release, key, release_sha, &channel);
   redis::response<long long, long long> del_publish;  // DEL and PUBLISH
   redis::response<long long> checked;                 // or the checked release
   req->subscribe.subscribe({channel});
   req->unsubscribe.unsubscribe({channel});
   co_await think(c, w);
   while (!stopping(c)) {
      auto const start = now_ns();
      c.shm.waiting_since[w.id] = start;
      bool subscribed = false;
      bool const got = co_await raw_acquire(c, conn, p, w, req, subscribed);
      auto const acquired = now_ns();
      c.shm.waiting_since[w.id] = 0;
      if (subscribed && --p.subscribers == 0)
         conn.async_exec(req->unsubscribe, redis::ignore, asio::consign(asio::detached, req));
      if (!got)
         break;
      bool const counted = measuring(c);
      enter_critical(c, w, start, acquired, counted);
      if (c.spec.hold.count() > 0)
         co_await sleep_for(c.spec.hold);
      co_await await_settled_waiter(c, w);
      leave_critical(c, w);
      std::optional<std::string> failed;
      if (release_sha.empty()) {
         auto [ec, n] = co_await conn.async_exec(req->release, del_publish, use_tuple);
         failed = release_failure(ec, del_publish);
      } else {
         auto [ec, n] = co_await conn.async_exec(req->release, checked, use_tuple);
         failed = release_failure(ec, checked);
      }
      if (failed)
         fail(c, "release: " + *failed);
      if (counted)
         c.result.cycle_ns.push_back(now_ns() - start);
      co_await think(c, w);
   }
}

}  // namespace

asio::awaitable<void> run_raw_workers(process_ctx& c, std::vector<worker>& workers)
{
   auto const url = detail::parse_url(c.spec.nodes.front());
   c.shm.started.fetch_add(1);  // also on failure, so that the harness does not wait for us
   if (!url) {
      fail(c, "bad URL: " + c.spec.nodes.front());
      co_return;
   }
   // Shared, so that it outlives its loops, which end after the stop.
   auto conn = std::make_shared<redis::connection>(c.io.get_executor(),
                                                   redis::logger{redis::logger::level::crit});
   auto pushes = std::make_shared<push_state>();
   conn->set_receive_response(pushes->resp);
   // The connection the library's nodes would make (HELLO, credentials, timeouts, health checks).
   conn->async_run(detail::make_redis_config(*url, config{}, "locksmith-bench-raw"),
                   asio::consign(asio::detached, conn));
   std::string sha;  // of checked_release, loaded once
   if (c.spec.checked_floor) {
      redis::request load;
      load.push("SCRIPT", "LOAD", checked_release);
      redis::response<std::string> loaded;
      // Not past the stop, should the server be out of reach.
      auto [ec, n] = co_await conn->async_exec(
         load, loaded, asio::cancel_after(c.spec.warmup + c.spec.duration, use_tuple));
      if (ec || !std::get<0>(loaded).has_value()) {
         fail(c, "SCRIPT LOAD: " + (ec ? ec.message() : std::get<0>(loaded).error().diagnostic));
         conn->cancel();
         co_return;
      }
      sha = std::get<0>(loaded).value();
   }
   if (c.spec.sc == scenario::handoff) {
      asio::co_spawn(c.io, receive_pushes(conn, pushes), asio::detached);
      co_await run_workers(
         c, workers, [&](worker& w) { return raw_handoff_worker(c, *conn, *pushes, w, sha); });
   } else {
      co_await run_workers(c, workers, [&](worker& w) { return raw_worker(c, *conn, w, sha); });
   }
   conn->cancel();
}

}  // namespace locksmith::bench
