// No herd: a release wakes one waiting process, not every one (issue 27). Waiting processes
// register among the name's waiters (acquire.lua), and a release names the one whose registration
// ends first (release.lua); the others sleep on. Against a real redis-server: three processes
// (three clients, each with its own connections) wait; each release wakes exactly one of them,
// which takes the lock with its first try after the message. A waiter that leaves takes its
// registration with it, and one that a release names but that is gone (crashed) strands nobody:
// the others take the lock at the holder's PTTL, as after a lost message.
#include "support/blocking_client.hpp"
#include "support/integration.hpp"
#include "support/subscribe_fixture.hpp"

#include "sansio/set_scripts.hpp"

#include <algorithm>
#include <array>
#include <memory>

namespace test_herd {

using namespace locksmith::test;

namespace {

std::string waiters_key(std::string const& name)
{
   return locksmith::detail::waiters_key("locksmith:", name);
}

// A holder and three waiting processes, each a client of its own.
struct three_waiters {
   explicit three_waiters(subscribe_fixture& f)
       : f{f}
       , holder{f.ioc.get_executor(), f.cfg()}
       , tasks{f.ioc}
   {
      for (auto& w : waiters)
         w = std::make_unique<waiter>(f);
   }

   struct waiter {
      explicit waiter(subscribe_fixture& f)
          : c{f.ioc.get_executor(), f.cfg()}
          , done{f.ioc}
      {}
      locksmith::client c;
      outcome out;
      event done;
   };

   // The holder takes the lock, then each waiter starts, in turn, and sleeps registered.
   asio::awaitable<lease> start(locksmith::lock_options opts)
   {
      auto held = co_await holder.async_lock(name, {.ttl = holder_ttl});
      for (std::size_t i = 0; i < waiters.size(); ++i) {
         auto& w = *waiters[i];
         tasks.spawn(wait_for_lock(w.c, name, opts, w.out, w.done));
         BOOST_REQUIRE(co_await eventually([&] {
            return w.out.diag.attempts >= 2 &&
                   f.srv.text({"ZCARD", waiters_key(name)}) == std::to_string(i + 1);
         }));
      }
      co_return held;
   }

   // The waiters that hold the lock now.
   std::vector<waiter*> done_now()
   {
      std::vector<waiter*> out;
      for (auto& w : waiters)
         if (w->done.is_set())
            out.push_back(w.get());
      return out;
   }

   subscribe_fixture& f;
   std::string const name = unique_key();
   std::chrono::milliseconds holder_ttl{30'000};
   locksmith::client holder;
   std::array<std::unique_ptr<waiter>, 3> waiters;
   task_group tasks;  // after the clients: destroyed first
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(herd, subscribe_fixture, *needs_redis_server())

// Each release wakes one waiter, which wins with the try that the message caused: after the first
// release, every waiter made one try (the one after its message), none in vain after the release
// of another. With a herd, the two others would try at the first release,
// and lose. The clients' metrics count those lost retries (retries_lost): before the release,
// every try after a waiter's first (its arrival's) lost; after it, none did. And the message that
// names a waiter goes to its process's own channel: the name's channel, to which every waiting
// process listens, carries only the last release's token (nobody was registered then), so the
// others were not even woken to read a message meant for another.
BOOST_AUTO_TEST_CASE(each_release_wakes_one_process)
{
   three_waiters s{*this};
   auto const channel = locksmith::detail::release_channel("locksmith:", s.name);
   locksmith::test::blocking_client listener{"127.0.0.1", std::to_string(srv.port()), 10s};
   listener.command({"SUBSCRIBE", channel});
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto held = co_await s.start(subscribe(30s, 60s));
      BOOST_TEST(s.done_now().empty());
      // Tries before the first release: two, or three on a loaded machine, where a try may
      // run between the confirmations of the name's channel and of the process's own.
      std::vector<std::size_t> before;
      for (auto const& w : s.waiters) {
         before.push_back(w->out.diag.attempts);
         BOOST_TEST(w->c.metrics().retries_lost == before.back() - 1);
      }
      co_await s.holder.async_unlock(held);
      for (std::size_t n = 1; n <= s.waiters.size(); ++n) {
         // One more waiter takes the lock, and no other moves meanwhile.
         BOOST_REQUIRE(co_await eventually([&] { return s.done_now().size() == n; }, 10s));
         auto* last = std::find_if(s.waiters.begin(), s.waiters.end(), [](auto const& w) {
                         return w->done.is_set() && w->out.held.held();
                      })->get();
         BOOST_TEST(!last->out.ec, last->out.ec.message());
         BOOST_TEST(srv.text({"ZCARD", waiters_key(s.name)}) ==
                    std::to_string(s.waiters.size() - n));
         co_await last->c.async_unlock(last->out.held);
      }
      for (std::size_t i = 0; i < s.waiters.size(); ++i) {
         auto const tries = s.waiters[i]->out.diag.attempts;
         BOOST_TEST_MESSAGE("tries of a waiter: " << before[i] << " + " << tries - before[i]);
         BOOST_TEST(tries - before[i] == 1u);  // the one its own message caused
         BOOST_TEST(s.waiters[i]->c.metrics().retries_lost == before[i] - 1);
      }
      BOOST_TEST(srv.text({"EXISTS", waiters_key(s.name)}) == "0");
   }());
   srv.text({"PUBLISH", channel, "end"});
   std::vector<std::string> heard;
   for (auto m = listener.receive(); m.elements.at(2).str != "end"; m = listener.receive())
      heard.push_back(m.elements.at(2).str);
   BOOST_TEST(heard.size() == 1u);  // the last release's
   for (auto const& h : heard)
      BOOST_TEST(!h.starts_with(locksmith::detail::handoff_prefix), h);
}

// A waiter that is cancelled leaves the waiters at once, not when its registration would have
// expired (its 60 s wait, or the holder's 30 s PTTL and a second): the next release names one that
// still waits, and nothing is left behind.
BOOST_AUTO_TEST_CASE(a_cancelled_waiter_leaves_the_waiters)
{
   locksmith::client holder{ioc.get_executor(), cfg()}, quitter{ioc.get_executor(), cfg()};
   asio::cancellation_signal cancel;
   error_code ended;
   event done{ioc};
   run(ioc, 40s, [&]() -> asio::awaitable<void> {
      auto held = co_await holder.async_lock(name, {.ttl = 30s});
      quitter.async_lock(name, subscribe(30s, 60s),
                         asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec, lease) {
                            ended = ec;
                            done.set();
                         }));
      BOOST_REQUIRE(co_await eventually(
         [&] {
            return srv.text({"ZCARD", waiters_key(name)}) == "1";
         },
         10s));
      BOOST_TEST(std::stoll(srv.text({"PTTL", waiters_key(name)})) > 20'000);
      cancel.emit(asio::cancellation_type::terminal);
      BOOST_REQUIRE(co_await done.wait(10s));
      BOOST_TEST(ended == asio::error::operation_aborted, ended.message());
      BOOST_TEST(co_await eventually(
         [&] {
            return srv.text({"EXISTS", waiters_key(name)}) == "0";
         },
         10s));
      co_await holder.async_unlock(held);
   }());
}

// A release names a waiter that is gone (a crashed process's registration, written here by
// hand): the message wakes nobody, the key stays reserved for it a moment (handoff_reserve), and
// the waiters still there take the lock when the holder's key would have expired (its PTTL: at
// most 6 s, renewed meanwhile), long before their wait ends.
BOOST_AUTO_TEST_CASE(a_named_waiter_that_is_gone_strands_nobody)
{
   three_waiters s{*this};
   s.holder_ttl = 6s;  // renewed: the least a 1 s node timeout allows
   std::string const ghost = "00000000000000ghost";
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto held = co_await s.start(subscribe(30s, 60s));
      // A live registration whose id sorts before theirs (it registered in 1970): the release
      // names it.
      srv.text({"EVAL",
                "local m = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES') "
                "return redis.call('ZADD', KEYS[1], tonumber(m[2]), ARGV[1])",
                "1", waiters_key(s.name), ghost});
      BOOST_REQUIRE(srv.text({"ZCARD", waiters_key(s.name)}) == "4");
      auto const released = clock_type::now();
      co_await s.holder.async_unlock(held);
      BOOST_TEST(srv.text({"ZSCORE", waiters_key(s.name), ghost}) == "(nil)");  // named: popped
      BOOST_REQUIRE(co_await eventually([&] { return !s.done_now().empty(); }, 15s));
      auto* first = s.done_now().front();
      BOOST_TEST_MESSAGE("first grant " << to_ms(*first->out.at - released)
                                        << " ms after the release that named a ghost");
      BOOST_TEST(!first->out.ec, first->out.ec.message());
      BOOST_TEST((*first->out.at - released < 15s));
      for (std::size_t n = 1; n <= s.waiters.size(); ++n) {
         BOOST_REQUIRE(co_await eventually([&] { return s.done_now().size() >= n; }, 15s));
         for (auto* w : s.done_now())
            if (w->out.held.held())
               co_await w->c.async_unlock(w->out.held);
      }
      for (auto const& w : s.waiters)
         BOOST_TEST(!w->out.ec, w->out.ec.message());
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_herd
