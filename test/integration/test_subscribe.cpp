// The subscribe wait strategy and the in-process queue against a real redis-server: a release
// message wakes a waiter at once, a lost message is made up for by the PTTL timer, subscriptions
// come back after a reconnect, cancellations leave no subscription and no broken queue, the local
// queue answers without round trips and in FIFO order, one release wakes one contender per
// process, 4 processes exclude each other, and the commands per acquisition do not grow with the
// hold time.
#include <locksmith/locksmith.hpp>
#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/scripts.hpp>

#include "support/keys.hpp"
#include "support/print.hpp"
#include "support/redis_server.hpp"
#include "support/run.hpp"

#include <boost/asio.hpp>
#include <boost/redis/connection.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <list>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace std::chrono_literals;
using locksmith::error;
using locksmith::error_code;
using locksmith::lease;
using locksmith::test::run;
using locksmith::test::unique_key;
using std::chrono::milliseconds;

namespace {

constexpr auto tuple = asio::as_tuple(asio::deferred);
using clock_type = std::chrono::steady_clock;

locksmith::lock_options subscribe(milliseconds ttl, milliseconds wait)
{
   return {.ttl = ttl, .wait = wait, .strategy = locksmith::wait_strategy::subscribe};
}

double to_ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// A one-shot event that a coroutine waits for with a deadline: set() wakes it at once.
class event {
public:
   explicit event(asio::io_context& ioc)
   : timer_{ioc}
   { }
   void set()
   {
      set_ = true;
      timer_.cancel();
   }
   bool is_set() const { return set_; }
   // True when set() was called before the deadline.
   asio::awaitable<bool> wait(clock_type::duration deadline)
   {
      if (!set_) {
         timer_.expires_after(deadline);
         co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      co_return set_;
   }

private:
   asio::steady_timer timer_;
   bool set_ = false;
};

// Sets its event when `n` tasks have called done().
struct countdown {
   countdown(asio::io_context& ioc, int n)
   : left{n}
   , all_done{ioc}
   {
      if (n == 0)
         all_done.set();
   }
   void done()
   {
      if (--left == 0)
         all_done.set();
   }
   int left;
   event all_done;
};

// Spawns coroutines that each have their own cancellation signal. Declared after the clients, it
// is destroyed before them: it then cancels what still runs (after a failed check) and runs the
// io_context until those coroutines have finished, so that none outlives the clients it uses.
class task_group {
public:
   explicit task_group(asio::io_context& ioc)
   : ioc_{ioc}
   { }
   task_group(task_group const&) = delete;
   task_group& operator=(task_group const&) = delete;

   void spawn(asio::awaitable<void> aw)
   {
      auto& sig = signals_.emplace_back();
      ++running_;
      asio::co_spawn(ioc_, std::move(aw), asio::bind_cancellation_slot(sig.slot(), [this](std::exception_ptr e) {
                        --running_;
                        if (e && !error_)
                           error_ = e;
                     }));
   }
   int running() const { return running_; }

   ~task_group()
   {
      if (running_ > 0) {
         for (auto& s : signals_)
            s.emit(asio::cancellation_type::terminal);
         auto const until = clock_type::now() + 3s;
         while (running_ > 0 && clock_type::now() < until) {
            if (ioc_.stopped())
               ioc_.restart();
            ioc_.run_one_until(until);
         }
      }
      if (error_) {
         try {
            std::rethrow_exception(error_);
         } catch (std::exception const& e) {
            BOOST_ERROR("a spawned coroutine threw: " << e.what());
         } catch (...) {
            BOOST_ERROR("a spawned coroutine threw");
         }
      }
   }

private:
   asio::io_context& ioc_;
   std::list<asio::cancellation_signal> signals_;
   int running_ = 0;
   std::exception_ptr error_;
};

// Calls of each command since the server started, from INFO commandstats ("evalsha" -> 12).
using command_stats = std::map<std::string, long long>;

// Commands that the scripts run inside EVALSHA; no client sends them in these tests.
bool run_by_scripts(std::string const& cmd)
{
   return cmd == "set" || cmd == "get" || cmd == "time" || cmd == "pttl" || cmd == "del" || cmd == "publish" ||
          cmd == "pexpire";
}

struct command_cost {
   long long sent = 0;  // commands that clients sent (EVALSHA, SUBSCRIBE, PING...), without INFO
   long long all = 0;   // plus those the scripts ran (SET, GET, TIME, PTTL, DEL, PUBLISH)
   long long evalsha = 0;
   long long ping = 0;  // the connections' health checks, one per second each
};

command_cost cost_between(command_stats const& before, command_stats const& after)
{
   command_cost c;
   for (auto const& [cmd, calls] : after) {
      auto const it = before.find(cmd);
      auto const d = calls - (it == before.end() ? 0 : it->second);
      if (cmd == "info" || cmd.starts_with("pubsub"))
         continue;  // ours: INFO commandstats, and PUBSUB NUMSUB polled while a channel lingers
      c.all += d;
      if (!run_by_scripts(cmd))
         c.sent += d;
      if (cmd == "evalsha")
         c.evalsha += d;
      if (cmd == "ping")
         c.ping += d;
   }
   return c;
}

struct subscribe_fixture {
   locksmith::test::redis_server srv;
   asio::io_context ioc;

   subscribe_fixture()
   {
      // Load the scripts, so that no NOSCRIPT fallback (one more EVAL) blurs the command counts.
      for (auto const* s : {&locksmith::detail::acquire_script(), &locksmith::detail::release_script(),
                            &locksmith::detail::extend_script()})
         BOOST_REQUIRE(srv.text({"SCRIPT", "LOAD", s->text}) == s->sha1);
   }

   // A node timeout of 1 s instead of 50 ms: this 2-core machine is shared with compilers, and a
   // reply that comes late must not turn into an error that these tests are not about.
   locksmith::config cfg() const { return {.nodes = {srv.url()}, .node_timeout = 1s}; }
   static std::string lock_key(std::string const& name) { return locksmith::detail::lock_key("locksmith:", name); }
   static std::string channel(std::string const& name)
   {
      return locksmith::detail::release_channel("locksmith:", name);
   }

   // Subscribers of the channel, as the server counts them.
   long long numsub(std::string const& ch) const
   {
      auto const r = srv.command({"PUBSUB", "NUMSUB", ch});
      BOOST_REQUIRE(r.elements.size() == 2u);
      return r.elements[1].integer;
   }

   // The ids of the connections that are subscribed to something.
   std::vector<std::string> pubsub_client_ids() const
   {
      std::vector<std::string> ids;
      std::istringstream in{srv.text({"CLIENT", "LIST", "TYPE", "pubsub"})};
      std::string line;
      while (std::getline(in, line))
         if (line.starts_with("id="))
            ids.push_back(line.substr(3, line.find(' ') - 3));
      return ids;
   }

   command_stats commandstats() const
   {
      command_stats stats;
      std::istringstream in{srv.text({"INFO", "commandstats"})};
      std::string line;
      while (std::getline(in, line)) {
         if (!line.starts_with("cmdstat_"))
            continue;
         auto const colon = line.find(':');
         auto const calls = line.find("calls=", colon);
         if (colon == std::string::npos || calls == std::string::npos)
            continue;
         stats[line.substr(8, colon - 8)] = std::stoll(line.substr(calls + 6));
      }
      return stats;
   }

   long long calls(std::string const& cmd) const
   {
      auto const stats = commandstats();
      auto const it = stats.find(cmd);
      return it == stats.end() ? 0 : it->second;
   }

   // Polls `pred` every millisecond while the io_context runs; false if it is still false after
   // the deadline.
   template <class Pred>
   asio::awaitable<bool> eventually(Pred pred, clock_type::duration deadline = 3s)
   {
      auto const until = clock_type::now() + deadline;
      asio::steady_timer t{ioc};
      for (;;) {
         if (pred())
            co_return true;
         if (clock_type::now() >= until)
            co_return false;
         t.expires_after(1ms);
         co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
      }
   }

   // Lets the io_context run the handlers that are ready now (and those they post), a few rounds.
   asio::awaitable<void> yield(int rounds = 3)
   {
      for (int i = 0; i < rounds; ++i)
         co_await asio::post(ioc, asio::use_awaitable);
   }
};

// What one waiter ended with.
struct outcome {
   std::optional<clock_type::time_point> at;  // when it completed
   error_code ec;
   lease held;
   locksmith::report diag;
};

// Waits for the lock, records how and when it ended in `out`, then sets `done`.
asio::awaitable<void> wait_for_lock(
   locksmith::client& c,
   std::string const& name,
   locksmith::lock_options opts,
   outcome& out,
   event& done)
{
   auto [ec, l] = co_await c.async_lock(name, opts, out.diag, tuple);
   out.at = clock_type::now();
   out.ec = ec;
   out.held = std::move(l);
   done.set();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(subscribe_waiting, subscribe_fixture)

// B sleeps on a 30 s PTTL timer; only the release message can wake it within milliseconds.
BOOST_AUTO_TEST_CASE(release_message_wakes_the_waiter_without_a_timer)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome wb;
   event b_done{ioc};
   auto waiter = [&] { return wait_for_lock(b, name, subscribe(30s, 10s), wb, b_done); };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(waiter());
      // Subscribed, and the try made after the subscription has answered: B sleeps now.
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == 1 && wb.diag.attempts >= 2; }));
      BOOST_TEST(!b_done.is_set());
      BOOST_TEST(std::stoll(srv.text({"PTTL", lock_key(name)})) > 29'000);
      auto const unlocked_at = clock_type::now();
      auto [uec] = co_await a.async_unlock(la, tuple);
      BOOST_TEST(!uec);
      BOOST_REQUIRE(co_await b_done.wait(5s));
      auto const latency = *wb.at - unlocked_at;
      BOOST_TEST_MESSAGE("wake latency after unlock: " << to_ms(latency) << " ms, attempts " << wb.diag.attempts);
      BOOST_TEST(!wb.ec);
      BOOST_TEST(wb.held.held());
      BOOST_TEST((latency < 50ms));
      BOOST_TEST(wb.diag.attempts == 3u);  // first try, try after subscribing, try after the message
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == wb.held.token());
      auto [ub] = co_await b.async_unlock(wb.held, tuple);
      BOOST_TEST(!ub);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
   }(), 20s);
}

// The key disappears without a release message (DEL behind everyone's back; A does not renew):
// B is not woken by a message, but its timer, set to the PTTL it saw, makes it try again when the
// key would have expired.
BOOST_AUTO_TEST_CASE(lost_message_is_made_up_by_the_pttl_timer)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome wb;
   event b_done{ioc};
   auto waiter = [&] { return wait_for_lock(b, name, subscribe(10s, 10s), wb, b_done); };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const t0 = clock_type::now();
      auto la = co_await a.async_lock(name, {.ttl = 300ms, .renew = false});
      tasks.spawn(waiter());
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == 1 && wb.diag.attempts >= 2; }));
      BOOST_REQUIRE(!b_done.is_set());
      auto const deleted_at = clock_type::now();
      BOOST_TEST(srv.text({"DEL", lock_key(name)}) == "1");
      BOOST_REQUIRE(co_await b_done.wait(5s));
      BOOST_TEST_MESSAGE("acquired " << to_ms(*wb.at - t0) << " ms after A's lock (TTL 300 ms), "
                                     << to_ms(*wb.at - deleted_at) << " ms after the DEL, attempts "
                                     << wb.diag.attempts);
      BOOST_TEST(!wb.ec);
      BOOST_TEST(wb.held.held());
      // Not woken by anything before its timer (no message), and woken by the timer, not the wait.
      BOOST_TEST((*wb.at - t0 >= 250ms));
      BOOST_TEST((*wb.at - t0 < 300ms + 200ms));
      BOOST_TEST(wb.diag.attempts == 3u);
      co_await b.async_unlock(wb.held);
   }(), 20s);
}

// A's lease runs out without an unlock or a renewal (as a crashed holder's): no message ever
// comes, and B takes over at the PTTL.
BOOST_AUTO_TEST_CASE(expired_holder_is_replaced_at_its_pttl)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome wb;
   event b_done{ioc};
   auto waiter = [&] { return wait_for_lock(b, name, subscribe(10s, 10s), wb, b_done); };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const t0 = clock_type::now();
      auto la = co_await a.async_lock(name, {.ttl = 300ms, .renew = false});
      tasks.spawn(waiter());
      BOOST_REQUIRE(co_await b_done.wait(5s));
      BOOST_TEST_MESSAGE("acquired " << to_ms(*wb.at - t0) << " ms after A's lock (TTL 300 ms), attempts "
                                     << wb.diag.attempts);
      BOOST_TEST(!wb.ec);
      BOOST_TEST((*wb.at - t0 >= 290ms));
      BOOST_TEST((*wb.at - t0 < 300ms + 200ms));
      BOOST_TEST(wb.diag.attempts <= 4u);  // no polling while it waits
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == wb.held.token());
      auto [ua] = co_await a.async_unlock(la, tuple);
      BOOST_TEST(ua == error::not_owner);
      co_await b.async_unlock(wb.held);
   }(), 20s);
}

// The server drops B's subscribed connection; the client reconnects (reconnect_wait 100 ms) and
// subscribes again, and the next release wakes B at once, not at its 30 s timer.
BOOST_AUTO_TEST_CASE(subscription_survives_a_reconnect)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome wb;
   event b_done{ioc};
   auto waiter = [&] { return wait_for_lock(b, name, subscribe(30s, 10s), wb, b_done); };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(waiter());
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == 1 && wb.diag.attempts >= 2; }));
      auto const before = pubsub_client_ids();
      BOOST_REQUIRE(before.size() == 2u);  // the subscriber connections of A and B
      auto const killed_at = clock_type::now();
      BOOST_TEST(srv.text({"CLIENT", "KILL", "TYPE", "pubsub"}) == "2");
      BOOST_TEST(numsub(channel(name)) == 0);
      BOOST_REQUIRE(co_await eventually(
         [&] {
            auto const now = pubsub_client_ids();
            return numsub(channel(name)) == 1 && now.size() == 2u &&
                   std::none_of(now.begin(), now.end(), [&](auto const& id) {
                      return std::find(before.begin(), before.end(), id) != before.end();
                   });
         },
         5s));
      BOOST_TEST_MESSAGE("subscription back " << to_ms(clock_type::now() - killed_at) << " ms after CLIENT KILL");
      BOOST_TEST(!b_done.is_set());
      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await b_done.wait(5s));
      auto const latency = *wb.at - unlocked_at;
      BOOST_TEST_MESSAGE("wake latency after the reconnect: " << to_ms(latency) << " ms, attempts "
                                                              << wb.diag.attempts);
      BOOST_TEST(!wb.ec);
      BOOST_TEST((latency < 100ms));
      BOOST_TEST(wb.diag.attempts <= 4u);
      co_await b.async_unlock(wb.held);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
   }(), 20s);
}

// The server drops every subscriber connection while waiters of three clients wait, and the
// holder unlocks right away, so its release message is lost. Each waiter must still get the lock
// in turn, long before the 30 s TTLs could free it (a new subscriber connection wakes every
// waiter of its client), nothing hangs, and no subscription is left once they are done.
BOOST_AUTO_TEST_CASE(killing_the_subscriber_connections_loses_no_waiter)
{
   constexpr int clients = 3, per_client = 2;
   locksmith::client a{ioc.get_executor(), cfg()};
   std::vector<std::unique_ptr<locksmith::client>> cs;
   for (int i = 0; i < clients; ++i)
      cs.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg()));
   auto const name = unique_key();
   int holders = 0, overlaps = 0, granted = 0;
   std::vector<error_code> failures;
   countdown finished{ioc, clients * per_client};
   task_group tasks{ioc};
   auto waiter = [&](locksmith::client& c) -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 15s), tuple);
      if (ec) {
         failures.push_back(ec);
      } else {
         ++granted;
         overlaps += ++holders > 1 ? 1 : 0;
         --holders;
         auto [uec] = co_await c.async_unlock(l, tuple);
         if (uec)
            failures.push_back(uec);
      }
      finished.done();
   };
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      for (auto& c : cs)
         for (int j = 0; j < per_client; ++j)
            tasks.spawn(waiter(*c));
      // Every client's head waiter is subscribed: the three clients' connections.
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == clients; }));
      auto const killed = srv.text({"CLIENT", "KILL", "TYPE", "pubsub"});
      BOOST_TEST(killed == std::to_string(clients + 1));  // and the holder's own
      auto const t0 = clock_type::now();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await finished.all_done.wait(10s));
      BOOST_TEST_MESSAGE("6 waiters served " << to_ms(clock_type::now() - t0) << " ms after the kill");
      BOOST_TEST(granted == clients * per_client);
      BOOST_TEST(overlaps == 0);
      BOOST_TEST(failures.empty());
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
   }(), 30s);
}

// 1,000 waiters over 4 clients, cancelled at random times (some right at initiation), with
// random cancellation types: all complete with operation_aborted, no subscription remains, the
// holder keeps its key, and every client's queue still works.
BOOST_AUTO_TEST_CASE(cancellation_storm_leaks_no_subscription)
{
   constexpr int clients = 4, per_client = 250;
   locksmith::client a{ioc.get_executor(), cfg()};
   std::vector<std::unique_ptr<locksmith::client>> cs;
   for (int i = 0; i < clients; ++i)
      cs.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg()));
   auto const name = unique_key();
   std::mt19937 random{std::random_device{}()};
   int aborted = 0, other = 0, immediate = 0;
   std::vector<error_code> others;
   clock_type::duration slowest{};
   countdown finished{ioc, clients * per_client};
   std::list<asio::cancellation_signal> signals;  // for the waiters cancelled at initiation

   auto waiter = [&](locksmith::client& c, std::chrono::microseconds after,
                     asio::cancellation_type type) -> asio::awaitable<void> {
      auto const t0 = clock_type::now();
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), asio::cancel_after(after, type, tuple));
      slowest = std::max(slowest, clock_type::now() - t0 - after);
      if (ec == asio::error::operation_aborted && !l.held())
         ++aborted;
      else
         ++other, others.push_back(ec);
      finished.done();
   };
   constexpr asio::cancellation_type types[] = {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                                                asio::cancellation_type::total};
   // After the storm: one waiter per client, which a release message must wake.
   countdown woken{ioc, clients};
   int after_failures = 0;
   auto after_storm = [&](locksmith::client& c) -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), tuple);
      if (ec) {
         ++after_failures;
      } else {
         auto [uec] = co_await c.async_unlock(l, tuple);
         after_failures += uec ? 1 : 0;
      }
      woken.done();
   };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      for (int i = 0; i < per_client; ++i) {
         for (auto& c : cs) {
            auto const type = types[random() % 3];
            if (random() % 20 == 0) {
               // Cancelled in the same handler that started it.
               ++immediate;
               auto& sig = signals.emplace_back();
               c->async_lock(name, subscribe(30s, 10s),
                             asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, lease l) {
                                if (ec == asio::error::operation_aborted && !l.held())
                                   ++aborted;
                                else
                                   ++other, others.push_back(ec);
                                finished.done();
                             }));
               sig.emit(type);
               continue;
            }
            tasks.spawn(waiter(*c, std::chrono::microseconds{random() % 50'001}, type));
         }
      }
      BOOST_REQUIRE(co_await finished.all_done.wait(20s));
      BOOST_TEST_MESSAGE(aborted << " aborted (" << immediate << " at initiation), " << other
                                 << " other outcomes; slowest cancellation took "
                                 << to_ms(slowest) << " ms");
      BOOST_TEST(aborted == clients * per_client);
      BOOST_TEST(other == 0);
      for (auto const& ec : others)
         BOOST_TEST_MESSAGE("unexpected outcome: " << ec.message());
      BOOST_TEST((slowest < 1s));
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == la.token());
      // Every client's queue is empty and consistent: each can take and release the key.
      co_await a.async_unlock(la);
      for (auto& c : cs) {
         auto [ec, l] = co_await c->async_try_lock(name, {}, tuple);
         BOOST_TEST(!ec, "try_lock after the storm: " << ec.message());
         auto [ec2, l2] = co_await c->async_lock(name, subscribe(30s, 200ms), tuple);
         BOOST_TEST(ec2 == error::wait_timeout);  // held by its own lease: queued, then timed out
         auto [uec] = co_await c->async_unlock(l, tuple);
         BOOST_TEST(!uec);
         auto [ec3, l3] = co_await c->async_lock(name, subscribe(30s, 1s), tuple);
         BOOST_TEST(!ec3);
         co_await c->async_unlock(l3);
      }
      // Each client's subscription count went back to zero, not just the server's: each one
      // subscribes again for a new waiter, and the releases wake those waiters one after the
      // other, long before A's 30 s TTL.
      auto la2 = co_await a.async_lock(name, {.ttl = 30s});
      for (auto& c : cs)
         tasks.spawn(after_storm(*c));
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == clients; }));
      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la2);
      BOOST_TEST(co_await woken.all_done.wait(5s));
      BOOST_TEST_MESSAGE(clients << " waiters after the storm served in " << to_ms(clock_type::now() - unlocked_at)
                                 << " ms");
      BOOST_TEST(after_failures == 0);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }(), 60s);
}

// Three waiters of one client: cancel the middle one, then the head (which sleeps subscribed);
// the last one must inherit the head's place and get the lock when A releases.
BOOST_AUTO_TEST_CASE(cancelling_the_middle_then_the_head_waiter)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome w[3];
   event done0{ioc}, done1{ioc}, done2{ioc};
   event* done[3] = {&done0, &done1, &done2};
   asio::cancellation_signal sig[2];
   auto waiter = [&](int i) -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), w[i].diag,
                                           asio::bind_cancellation_slot(sig[i < 2 ? i : 0].slot(), tuple));
      w[i].at = clock_type::now();
      w[i].ec = ec;
      w[i].held = std::move(l);
      done[i]->set();
   };
   // Waiter 3 has no cancellation slot of ours.
   auto last = [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), w[2].diag, tuple);
      w[2].at = clock_type::now();
      w[2].ec = ec;
      w[2].held = std::move(l);
      done[2]->set();
   };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(waiter(0));
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == 1 && w[0].diag.attempts >= 2; }));
      auto const evals = calls("evalsha");
      tasks.spawn(waiter(1));
      tasks.spawn(last());
      co_await yield();
      // Queued behind the head: they do not talk to Redis.
      BOOST_TEST(calls("evalsha") == evals);
      BOOST_TEST(w[1].diag.attempts == 0u);
      BOOST_TEST(w[2].diag.attempts == 0u);

      sig[1].emit(asio::cancellation_type::terminal);
      BOOST_REQUIRE(co_await done[1]->wait(1s));
      BOOST_TEST(w[1].ec == asio::error::operation_aborted);
      BOOST_TEST(w[1].diag.attempts == 0u);
      BOOST_TEST(!done[0]->is_set());
      BOOST_TEST(!done[2]->is_set());

      sig[0].emit(asio::cancellation_type::terminal);
      BOOST_REQUIRE(co_await done[0]->wait(1s));
      BOOST_TEST(w[0].ec == asio::error::operation_aborted);
      // The last waiter is the head now: it tries once, finds the key taken, and sleeps
      // subscribed (the subscription passed on with the queue).
      BOOST_REQUIRE(co_await eventually([&] { return w[2].diag.attempts >= 1; }));
      BOOST_TEST(numsub(channel(name)) == 1);
      BOOST_TEST(!done[2]->is_set());

      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await done[2]->wait(5s));
      BOOST_TEST_MESSAGE("last waiter woke " << to_ms(*w[2].at - unlocked_at) << " ms after the unlock");
      BOOST_TEST(!w[2].ec);
      BOOST_TEST((*w[2].at - unlocked_at < 100ms));
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == w[2].held.token());
      co_await c.async_unlock(w[2].held);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
   }(), 20s);
}

// A name that this client holds, or waits for, answers lock_taken without a round trip.
BOOST_AUTO_TEST_CASE(try_lock_on_a_locally_busy_name_makes_no_round_trip)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   auto const held_name = unique_key("held");
   auto const waited_name = unique_key("waited");
   outcome w;
   event w_done{ioc};
   auto waiter = [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(waited_name, subscribe(30s, 10s), w.diag, tuple);
      w.ec = ec;
      w.held = std::move(l);
      w_done.set();
   };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto mine = co_await c.async_lock(held_name, {.ttl = 30s});
      auto theirs = co_await a.async_lock(waited_name, {.ttl = 30s});
      tasks.spawn(waiter());
      BOOST_REQUIRE(co_await eventually([&] { return w.diag.attempts >= 2; }));
      auto const before = commandstats();
      for (auto const* n : {&held_name, &waited_name}) {
         locksmith::report diag;
         auto [ec, l] = co_await c.async_try_lock(*n, {}, diag, tuple);
         BOOST_TEST(ec == error::lock_taken);
         BOOST_TEST(diag.attempts == 0u);
         auto [ec2, l2] = co_await c.async_lock(*n, subscribe(30s, 0ms), tuple);
         BOOST_TEST(ec2 == error::lock_taken);
      }
      auto const cost = cost_between(before, commandstats());
      BOOST_TEST(cost.evalsha == 0);
      BOOST_TEST(cost.sent - cost.ping == 0);
      BOOST_TEST(!w_done.is_set());
      co_await a.async_unlock(theirs);
      BOOST_REQUIRE(co_await w_done.wait(5s));
      BOOST_TEST(!w.ec);
      co_await c.async_unlock(w.held);
      co_await c.async_unlock(mine);
   }(), 20s);
}

// Five coroutines of one client acquire in the order in which they asked, both when another
// client holds the key and when one of their own does.
BOOST_AUTO_TEST_CASE(local_queue_is_fifo)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   constexpr int n = 5;
   for (bool held_by_other : {true, false}) {
      BOOST_TEST_CONTEXT("held by " << (held_by_other ? "another client" : "the same client"))
      {
         auto const name = unique_key(held_by_other ? "other" : "same");
         std::vector<int> order;
         std::vector<error_code> errors;
         countdown finished{ioc, n};
         locksmith::report head;
         auto waiter = [&](int i) -> asio::awaitable<void> {
            locksmith::report diag;
            auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), i == 0 ? head : diag, tuple);
            if (ec) {
               errors.push_back(ec);
            } else {
               order.push_back(i);
               co_await yield();  // hold it while the others stay queued
               co_await c.async_unlock(l);
            }
            finished.done();
         };
         task_group tasks{ioc};
         run(ioc, [&]() -> asio::awaitable<void> {
            auto& holder = held_by_other ? a : c;
            auto l = co_await holder.async_lock(name, {.ttl = 30s});
            for (int i = 0; i < n; ++i) {
               tasks.spawn(waiter(i));
               if (i == 0 && held_by_other)  // the head sleeps subscribed before the others come
                  BOOST_REQUIRE(co_await eventually([&] { return head.attempts >= 2; }));
               co_await yield();
            }
            BOOST_TEST(order.empty());
            co_await holder.async_unlock(l);
            BOOST_REQUIRE(co_await finished.all_done.wait(10s));
            BOOST_TEST(errors.empty());
            BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}), boost::test_tools::per_element());
            BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
         }(), 20s);
      }
   }
}

// 3 clients x 5 waiters on one key: a release wakes the head of each process, not each waiter, so
// the EVALSHA calls per acquisition stay small (about: its acquire, its release, and one failed
// try by the head of each other process that still waits).
BOOST_AUTO_TEST_CASE(one_release_wakes_one_contender_per_process)
{
   constexpr int clients = 3, per_client = 5;
   locksmith::client a{ioc.get_executor(), cfg()};
   std::vector<std::unique_ptr<locksmith::client>> cs;
   for (int i = 0; i < clients; ++i)
      cs.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg()));
   auto const name = unique_key();
   int failures = 0;
   countdown finished{ioc, clients * per_client};
   std::vector<locksmith::report> heads(clients);
   auto waiter = [&](int client, int i) -> asio::awaitable<void> {
      locksmith::report diag;
      auto [ec, l] = co_await cs[client]->async_lock(name, subscribe(30s, 20s), i == 0 ? heads[client] : diag, tuple);
      if (ec) {
         ++failures;
      } else {
         co_await yield();
         auto [uec] = co_await cs[client]->async_unlock(l, tuple);
         failures += uec ? 1 : 0;
      }
      finished.done();
   };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      for (int k = 0; k < clients; ++k) {
         tasks.spawn(waiter(k, 0));
         BOOST_REQUIRE(co_await eventually([&] { return heads[k].attempts >= 2; }));
      }
      for (int k = 0; k < clients; ++k)
         for (int i = 1; i < per_client; ++i)
            tasks.spawn(waiter(k, i));
      co_await yield();
      BOOST_TEST(numsub(channel(name)) == clients);
      auto const before = commandstats();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await finished.all_done.wait(20s));
      auto const cost = cost_between(before, commandstats());
      constexpr int acquisitions = clients * per_client;
      BOOST_TEST_MESSAGE("handoff of " << acquisitions << " acquisitions: " << cost.evalsha << " EVALSHA ("
                                       << double(cost.evalsha) / acquisitions << " per acquisition), "
                                       << cost.sent << " commands sent, " << cost.all << " with those of the scripts");
      BOOST_TEST(failures == 0);
      // Waking every waiter would make each release cost one try per waiter left (up to 14).
      BOOST_TEST(cost.evalsha <= 6 * acquisitions);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }(), 30s);
}

namespace {

// The body of one child process of the multi-process test: 8 coroutines x 25 rounds of lock,
// GET counter, SET counter + 1, unlock. Exit code 0 when every step succeeded.
[[noreturn]] void counter_child(pid_t parent, std::string const& url, std::uint16_t port, std::string const& name,
                                std::string const& counter, int workers, int rounds)
{
   if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      ::_exit(3);
   int rc = 2;
   try {
      asio::io_context ioc;
      locksmith::client c{ioc.get_executor(), {.nodes = {url}, .node_timeout = 1s}};
      redis::connection data{ioc, redis::logger{redis::logger::level::err}};
      redis::config rc_cfg;
      rc_cfg.addr.port = std::to_string(port);
      data.async_run(rc_cfg, asio::detached);
      int failures = 0, finished = 0;
      auto worker = [&]() -> asio::awaitable<void> {
         for (int i = 0; i < rounds; ++i) {
            auto [ec, l] = co_await c.async_lock(name, subscribe(10s, 60s), tuple);
            if (ec) {
               std::fprintf(stderr, "child %d: lock: %s\n", int(::getpid()), ec.message().c_str());
               ++failures;
               continue;
            }
            redis::request get;
            get.push("GET", counter);
            redis::response<std::optional<std::int64_t>> value;
            auto [gec, gn] = co_await data.async_exec(get, value, tuple);
            if (gec || std::get<0>(value).has_error()) {
               ++failures;
            } else {
               redis::request set;
               set.push("SET", counter, std::get<0>(value).value().value_or(0) + 1);
               auto [sec, sn] = co_await data.async_exec(set, redis::ignore, tuple);
               failures += sec ? 1 : 0;
            }
            auto [uec] = co_await c.async_unlock(l, tuple);
            if (uec) {
               std::fprintf(stderr, "child %d: unlock: %s\n", int(::getpid()), uec.message().c_str());
               ++failures;
            }
         }
         ++finished;
      };
      run(ioc, [&]() -> asio::awaitable<void> {
         for (int j = 0; j < workers; ++j)
            asio::co_spawn(ioc, worker(), asio::detached);
         asio::steady_timer t{ioc};
         while (finished < workers) {
            t.expires_after(1ms);
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
         }
      }(), 60s);
      rc = failures == 0 ? 0 : 1;
   } catch (std::exception const& e) {
      std::fprintf(stderr, "child %d: %s\n", int(::getpid()), e.what());
   }
   ::_exit(rc);  // no destructors, no Boost.Test teardown, no flush of the parent's buffers
}

}  // namespace

// 4 processes (fork) x 8 coroutines x 25 rounds of a non-atomic increment under the lock, with
// the subscribe strategy: the counter must be exact.
BOOST_AUTO_TEST_CASE(four_processes_exclude_each_other)
{
   constexpr int processes = 4, workers = 8, rounds = 25;
   auto const name = unique_key("lock");
   auto const counter = unique_key("counter");
   std::fflush(nullptr);
   std::vector<pid_t> children;
   for (int p = 0; p < processes; ++p) {
      pid_t const parent = ::getpid();
      pid_t const pid = ::fork();
      BOOST_REQUIRE_MESSAGE(pid >= 0, "fork failed");
      if (pid == 0)
         counter_child(parent, srv.url(), srv.port(), name, counter, workers, rounds);
      children.push_back(pid);
   }
   // Reap with a deadline; kill what is left when it passes.
   std::vector<int> status(processes, -1);
   int left = processes;
   auto const t0 = clock_type::now();
   auto const until = t0 + 90s;
   while (left > 0 && clock_type::now() < until) {
      for (int p = 0; p < processes; ++p) {
         if (status[p] != -1)
            continue;
         int st = 0;
         if (::waitpid(children[p], &st, WNOHANG) == children[p])
            status[p] = st, --left;
      }
      if (left > 0)
         std::this_thread::sleep_for(5ms);
   }
   for (int p = 0; p < processes; ++p) {
      if (status[p] != -1)
         continue;
      ::kill(children[p], SIGKILL);
      int st = 0;
      while (::waitpid(children[p], &st, 0) < 0 && errno == EINTR) {
      }
      BOOST_ERROR("child " << p << " did not finish within 90 s");
   }
   BOOST_TEST_MESSAGE(processes * workers * rounds << " increments by " << processes << " processes in "
                                                   << to_ms(clock_type::now() - t0) << " ms");
   for (int p = 0; p < processes; ++p) {
      BOOST_TEST_CONTEXT("child " << p)
      {
         BOOST_TEST(WIFEXITED(status[p]));
         BOOST_TEST(WEXITSTATUS(status[p]) == 0);
      }
   }
   BOOST_TEST(srv.text({"GET", counter}) == std::to_string(processes * workers * rounds));
   BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   BOOST_TEST(numsub(channel(name)) == 0);
}

// 2 clients x 2 workers take one key 20 times each, holding it 0, 1 or 100 ms: the commands per
// acquisition must not grow with the hold time (a spinning waiter's would), since a waiter costs
// nothing while it sleeps. Counted: the commands that clients sent, from INFO commandstats (the
// commands that the scripts run inside, SET, GET, TIME, PTTL, DEL, PUBLISH, are reported apart:
// an uncontended acquire and release alone is 9 of those "all" commands).
BOOST_AUTO_TEST_CASE(commands_per_acquisition_do_not_grow_with_the_hold)
{
   constexpr int clients = 2, per_client = 2, rounds = 20;
   constexpr int acquisitions = clients * per_client * rounds;
   std::vector<std::unique_ptr<locksmith::client>> cs;
   for (int i = 0; i < clients; ++i)
      cs.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg()));
   std::vector<double> sent_per_acquisition;
   for (auto hold : {0ms, 1ms, 100ms}) {
      BOOST_TEST_CONTEXT("hold " << hold.count() << " ms")
      {
         auto const name = unique_key(std::to_string(hold.count()) + "ms");
         int failures = 0;
         countdown finished{ioc, clients * per_client};
         auto worker = [&](locksmith::client& c) -> asio::awaitable<void> {
            for (int i = 0; i < rounds; ++i) {
               locksmith::report diag;
               auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 60s), diag, tuple);
               if (ec) {
                  ++failures;
                  BOOST_TEST_MESSAGE("lock failed: " << ec.message() << "; " << diag.message());
                  continue;
               }
               if (hold > 0ms) {
                  asio::steady_timer t{ioc, hold};
                  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
               }
               auto [uec] = co_await c.async_unlock(l, diag, tuple);
               if (uec) {
                  ++failures;
                  BOOST_TEST_MESSAGE("unlock failed: " << uec.message() << "; " << diag.message());
               }
            }
            finished.done();
         };
         task_group tasks{ioc};
         run(ioc, [&]() -> asio::awaitable<void> {
            // Connected (HELLO done) before counting.
            for (auto& c : cs) {
               auto l = co_await c->async_lock(unique_key("warm-up"));
               co_await c->async_unlock(l);
            }
            auto const before = commandstats();
            auto const t0 = clock_type::now();
            for (auto& c : cs)
               for (int j = 0; j < per_client; ++j)
                  tasks.spawn(worker(*c));
            BOOST_REQUIRE(co_await finished.all_done.wait(60s));
            auto const elapsed = clock_type::now() - t0;
            // The last unsubscribe goes out after the last unlock: count it too.
            BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
            auto const cost = cost_between(before, commandstats());
            BOOST_TEST_MESSAGE("hold " << hold.count() << " ms: " << acquisitions << " acquisitions in "
                                       << to_ms(elapsed) << " ms; per acquisition " << double(cost.sent) / acquisitions
                                       << " commands sent (" << double(cost.evalsha) / acquisitions
                                       << " EVALSHA), " << double(cost.all) / acquisitions
                                       << " with those run by the scripts");
            BOOST_TEST(failures == 0);
            BOOST_TEST(cost.sent <= 8 * acquisitions);
            BOOST_TEST(cost.all <= 20 * acquisitions);  // ~4 script calls, each 5 commands at most
            sent_per_acquisition.push_back(double(cost.sent) / acquisitions);
         }(), 90s);
      }
   }
   // Constant: holding 100 times longer costs (almost) nothing more.
   BOOST_REQUIRE(sent_per_acquisition.size() == 3u);
   auto const [low, high] = std::minmax_element(sent_per_acquisition.begin(), sent_per_acquisition.end());
   BOOST_TEST(*high - *low <= 1.0);
}

// client::cancel() "closes the connections: operations in flight complete with errors". A waiter
// that sleeps subscribed is such an operation: it must complete soon, not at its wait deadline.
BOOST_AUTO_TEST_CASE(client_cancel_ends_a_sleeping_waiter)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   outcome wb;
   event b_done{ioc};
   auto waiter = [&] { return wait_for_lock(b, name, subscribe(30s, 3s), wb, b_done); };
   task_group tasks{ioc};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(waiter());
      BOOST_REQUIRE(co_await eventually([&] { return numsub(channel(name)) == 1 && wb.diag.attempts >= 2; }));
      auto const cancelled_at = clock_type::now();
      b.cancel();
      co_await b_done.wait(8s);
      BOOST_REQUIRE(b_done.is_set());
      BOOST_TEST_MESSAGE("waiter completed " << to_ms(*wb.at - cancelled_at) << " ms after client::cancel() with \""
                                             << wb.ec.message() << "\", attempts " << wb.diag.attempts);
      BOOST_TEST(wb.ec);
      BOOST_TEST((*wb.at - cancelled_at < 1s));
      co_await a.async_unlock(la);
   }(), 20s);
}

BOOST_AUTO_TEST_SUITE_END()
