// The single-node lock against a real redis-server: mutual exclusion, ownership checks, expiry,
// the NOSCRIPT fallback, cancellation, a server that is down, bad input and WRONGTYPE.
#include "support/integration.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/strand.hpp>
#include <boost/redis/connection.hpp>

#include <cstdint>

namespace test_lock {

namespace redis = boost::redis;

BOOST_FIXTURE_TEST_SUITE(single_node_lock, server_fixture, *needs_redis_server())

// 64 coroutines over 8 clients (8 connections, so the Redis lock and not only the in-process
// queue decides) do GET, then yield, then SET on a counter under the lock, 50 times each. A node
// timeout of 1 s, not 50 ms: the test is about the count, and under the sanitizers with other
// test runs beside, an unlock once took longer than 50 ms and counted as a failure.
static void counter_is_exact(server_fixture& f, locksmith::wait_strategy_type strategy)
{
   auto const name = unique_key("lock");
   auto const counter = unique_key("counter");
   constexpr int clients = 8, per_client = 8, rounds = 50;
   auto const cs = make_clients(f.ioc, f.cfg(1s), clients);
   redis::connection data{f.ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   rc.addr.port = std::to_string(f.srv.port());
   bool data_stopped = false;
   data.async_run(rc, [&](error_code) { data_stopped = true; });
   int failures = 0, finished = 0;

   auto worker = [&](locksmith::client& c) -> asio::awaitable<void> {
      for (int i = 0; i < rounds; ++i) {
         auto [ec, l] =
            co_await c.async_lock(name, {.ttl = 10s, .wait = 30s, .strategy = strategy}, tuple);
         if (ec) {
            ++failures;
            continue;
         }
         redis::request get;
         get.push("GET", counter);
         redis::response<std::optional<std::int64_t>> value;
         co_await data.async_exec(get, value);
         redis::request set;
         set.push("SET", counter, std::get<0>(value).value().value_or(0) + 1);
         co_await data.async_exec(set);
         auto [uec] = co_await c.async_unlock(l, tuple);
         failures += uec ? 1 : 0;
      }
      ++finished;
   };
   run(f.ioc, 120s, [&]() -> asio::awaitable<void> {
      for (auto& c : cs)
         for (int j = 0; j < per_client; ++j)
            asio::co_spawn(f.ioc, worker(*c), asio::detached);
      asio::steady_timer t{f.ioc};
      while (finished < clients * per_client) {
         t.expires_after(1ms);
         co_await t.async_wait();
      }
   }());
   data.cancel();
   // Its run ends on the io_context: let it, before the connection goes.
   BOOST_TEST(run(f.ioc, eventually([&] { return data_stopped; })));
   BOOST_TEST(failures == 0);
   BOOST_TEST(f.srv.text({"GET", counter}) == std::to_string(clients * per_client * rounds));
}

BOOST_AUTO_TEST_CASE(counter_is_exact_with_spin)
{
   counter_is_exact(*this, locksmith::wait_strategy::spin{.interval = 1ms, .jitter = 1ms});
}

BOOST_AUTO_TEST_CASE(counter_is_exact_with_subscribe)
{
   counter_is_exact(*this, locksmith::wait_strategy::subscribe);
}

BOOST_AUTO_TEST_CASE(lease_carries_token_fence_and_validity)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const before = std::chrono::steady_clock::now();
      auto l1 = co_await c.async_lock(name, {.ttl = 10s});
      BOOST_TEST(l1.held());
      BOOST_TEST(l1.name() == name);
      BOOST_TEST(l1.token().size() == 32u);
      BOOST_TEST(l1.token().find_first_not_of("0123456789abcdef") == std::string::npos);
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == l1.token());
      BOOST_TEST(srv.text({"PTTL", lock_key(name)}) != "-1");
      // valid_until = start + ttl - (ttl / 100 + 2 ms)
      BOOST_TEST((l1.valid_until() > before + 10s - 102ms - 1ms));
      BOOST_TEST((l1.valid_until() <= std::chrono::steady_clock::now() + 10s - 102ms));
      co_await c.async_unlock(l1);
      BOOST_TEST(!l1.held());
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      auto l2 = co_await c.async_lock(name);
      BOOST_TEST(l2.fencing_token() > l1.fencing_token());
      BOOST_TEST(l2.token() != l1.token());
      // Fences keep rising after the fence key is gone (the server's clock takes over).
      srv.text({"DEL", lock_key(name) + ":fence"});
      co_await c.async_unlock(l2);
      auto l3 = co_await c.async_lock(name);
      BOOST_TEST(l3.fencing_token() > l2.fencing_token());
      co_await c.async_unlock(l3);
   }());
}

BOOST_AUTO_TEST_CASE(a_second_owner_is_refused_until_release)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name);
      auto [ec1, lb1] = co_await b.async_try_lock(name, {}, tuple);
      BOOST_TEST(ec1 == error::lock_taken);
      BOOST_TEST(!lb1.held());
      // The same process holds it: answered locally. (Before b waits: a waiter that gives up
      // takes its registration out in the background, one more EVALSHA.)
      auto const evals = calls("evalsha");
      auto [ec3, la2] = co_await a.async_try_lock(name, {}, tuple);
      BOOST_TEST(ec3 == error::lock_taken);
      BOOST_TEST(calls("evalsha") == evals + 0);
      auto [ec2, lb2] = co_await b.async_lock(name, {.wait = 50ms}, tuple);
      BOOST_TEST(ec2 == error::wait_timeout);
      co_await a.async_unlock(la);
      auto [ec4, lb4] = co_await b.async_try_lock(name, {}, tuple);
      BOOST_TEST(!ec4);
      co_await b.async_unlock(lb4);
   }());
}

// Where each kind of handler completes. A coroutine on the client's executor, and a plain
// callback (whose executor is the client's), are called at once by the completion, which runs
// there; never inside the call that started the operation. A callback bound to a strand runs on
// that strand; a type-erased handler (any_completion_handler, whose executor is an
// any_completion_executor) completes through its executor, as every handler did before.
BOOST_AUTO_TEST_CASE(every_kind_of_handler_completes_on_its_executor_never_inside_the_call)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto strand = asio::make_strand(ioc);
   int done = 0;
   auto until = [&](int n) -> asio::awaitable<void> {
      asio::steady_timer t{ioc};
      while (done < n) {
         t.expires_after(1ms);
         co_await t.async_wait();
      }
   };
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      lease held;
      // A plain callback; then an unlock of a lease not held, completed by a post.
      bool inside = true;
      c.async_lock(name, {.ttl = 10s}, [&](error_code ec, lease l) {
         BOOST_TEST(!inside);
         BOOST_TEST(!ec);
         held = std::move(l);
         ++done;
      });
      inside = false;
      co_await until(1);
      lease none;
      inside = true;
      c.async_unlock(none, [&](error_code ec) {
         BOOST_TEST(!inside);
         BOOST_TEST(ec == error::not_held);
         ++done;
      });
      inside = false;
      co_await until(2);
      // Bound to a strand: runs there.
      c.async_unlock(held, asio::bind_executor(strand, [&](error_code ec) {
                        BOOST_TEST(strand.running_in_this_thread());
                        BOOST_TEST(!ec);
                        ++done;
                     }));
      co_await until(3);
      // Type-erased handlers.
      c.async_lock(name, {.ttl = 10s},
                   asio::any_completion_handler<void(error_code, lease)>{
                      asio::bind_executor(strand, [&](error_code ec, lease l) {
                         BOOST_TEST(strand.running_in_this_thread());
                         BOOST_TEST(!ec);
                         held = std::move(l);
                         ++done;
                      })});
      co_await until(4);
      c.async_unlock(held, asio::any_completion_handler<void(error_code)>{[&](error_code ec) {
                        BOOST_TEST(!ec);
                        ++done;
                     }});
      co_await until(5);
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

BOOST_AUTO_TEST_CASE(wrong_token_cannot_release_or_extend)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30ms, .renew = false});
      // Wait for the expiry by the server's clock, then let a second holder in.
      BOOST_REQUIRE(co_await key_disappears(key));
      auto lb = co_await b.async_lock(name, {.ttl = 10s});
      auto [ext] = co_await a.async_extend(la, 10s, tuple);
      BOOST_TEST(ext == error::not_owner);
      auto [rel] = co_await a.async_unlock(la, tuple);
      BOOST_TEST(rel == error::not_owner);
      BOOST_TEST(srv.text({"GET", key}) == lb.token());
      // The scripts themselves refuse a forged token.
      auto const& release = locksmith::detail::release_script();
      BOOST_TEST(srv.text({"EVAL", release.text, "1", key, std::string(32, 'f'), "ch"}) == "0");
      auto const& extend = locksmith::detail::extend_script();
      auto const forged = srv.command(
         {"EVAL", extend.text, "2", key, key + ":fence", std::string(32, 'f'), "1000", "61000"});
      BOOST_TEST_REQUIRE(forged.elements.size() == 1u);
      BOOST_TEST(forged.elements[0].integer == 0);
      BOOST_TEST((forged.elements[0].type == locksmith::test::reply::kind::integer));
      BOOST_TEST(srv.text({"GET", key}) == lb.token());
      co_await b.async_unlock(lb);
   }());
}

BOOST_AUTO_TEST_CASE(unlock_after_expiry_says_expired)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 20ms, .renew = false});
      BOOST_REQUIRE(co_await key_disappears(lock_key(name)));
      BOOST_TEST(!l.held());
      auto l2 = lease{};
      auto [ext] = co_await c.async_extend(l, 1s, tuple);
      BOOST_TEST(ext == error::lease_expired);
      auto [ec] = co_await c.async_unlock(l, tuple);
      BOOST_TEST(ec == error::lease_expired);
      auto [again] = co_await c.async_unlock(l, tuple);
      BOOST_TEST(again == error::not_held);
      auto [empty] = co_await c.async_unlock(l2, tuple);
      BOOST_TEST(empty == error::not_held);
   }());
}

// A lease that is not renewed stops holding the name in its own process once it expires.
BOOST_AUTO_TEST_CASE(an_expired_unrenewed_lease_frees_the_name_locally)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto old = co_await c.async_lock(name, {.ttl = 100ms, .renew = false});
      co_await c.async_extend(old, 1s);  // moves the expiry: still held at 300 ms
      co_await sleep(300ms);
      auto [early, l0] = co_await c.async_try_lock(name, {}, tuple);
      BOOST_TEST(early == error::lock_taken);
      auto const t0 = clock_type::now();
      auto l = co_await c.async_lock(name, {.wait = 10s});
      BOOST_TEST((clock_type::now() - t0 < 5s));  // at the expiry, not at the wait's end
      BOOST_TEST(l.held());
      auto [ec] = co_await c.async_unlock(old, tuple);
      BOOST_TEST(ec == error::not_owner);
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == l.token());
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_CASE(extend_moves_ttl_and_validity)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 1s});
      auto const before = l.valid_until();
      co_await c.async_extend(l, 60s);
      BOOST_TEST((l.valid_until() > before + 50s));
      BOOST_TEST(std::stoll(srv.text({"PTTL", lock_key(name)})) > 50'000);
      auto [bad] = co_await c.async_extend(l, 0ms, tuple);
      BOOST_TEST(bad == error::invalid_argument);
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_CASE(noscript_falls_back_to_eval)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name);
      co_await c.async_unlock(l);
      BOOST_TEST(srv.text({"SCRIPT", "FLUSH"}) == "OK");
      auto const evals = calls("eval");
      auto l2 = co_await c.async_lock(name);
      co_await c.async_extend(l2, 5s);
      co_await c.async_unlock(l2);
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      // One EVAL per script after the flush; EVALSHA works again after that.
      BOOST_TEST(calls("eval") == evals + 3);
      auto l3 = co_await c.async_lock(name);
      co_await c.async_unlock(l3);
      BOOST_TEST(calls("eval") == evals + 3);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_lock
