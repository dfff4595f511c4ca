// One client used from an io_context that 4 threads run: from its own strand, and from coroutines
// on other strands, which start operations with no hop by hand (client.hpp, "Threads"). Mutual
// exclusion holds, and each completion runs on its caller's strand. Built with
// -fsanitize=thread (scripts/test.sh --sanitize thread), these are the tests that let the thread
// sanitizer look at the library's handlers on several threads.
#include "support/integration.hpp"

#include <array>
#include <atomic>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace test_threads {

BOOST_AUTO_TEST_SUITE(threads, *needs_redis_server())

namespace {

using strand_type = asio::strand<asio::io_context::executor_type>;

// Runs `ioc` on 4 threads until `done` is ready (60 s at most), destroys `c` on its own executor,
// then joins the threads. True when `done` came in time.
bool run_on_4_threads(asio::io_context& ioc, std::future<void> done,
                      std::optional<locksmith::client>& c)
{
   auto work = asio::make_work_guard(ioc);
   std::vector<std::thread> pool;
   for (int i = 0; i < 4; ++i)
      pool.emplace_back([&ioc] { ioc.run(); });
   bool const in_time = done.wait_for(60s) == std::future_status::ready;
   std::promise<void> closed;
   asio::post(c->get_executor(), [&] {
      c.reset();
      closed.set_value();
   });
   closed.get_future().wait_for(10s);
   work.reset();
   ioc.stop();
   for (auto& t : pool)
      t.join();
   return in_time;
}

// What both cases check once the threads are joined: the workers finished in time, no two held
// a name at once, nothing failed, every completion ran on its caller's strand, and no lock key
// is left.
void check_outcome(bool done, int overlaps, int failures, int off_strand, redis_server& srv,
                   std::vector<std::string> const& names)
{
   BOOST_REQUIRE_MESSAGE(done, "the workers did not finish within 60 s");
   BOOST_TEST(overlaps == 0);
   BOOST_TEST(failures == 0);
   BOOST_TEST(off_strand == 0);
   for (auto const& n : names)
      BOOST_TEST(srv.text({"EXISTS", lock_key(n)}) == "0");
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_client_on_a_strand_of_an_io_context_run_by_4_threads)
{
   redis_server srv;
   asio::io_context ioc{4};
   auto strand = asio::make_strand(ioc);
   std::optional<locksmith::client> c;
   c.emplace(strand, locksmith::config{.nodes = {srv.url()}});
   std::vector<std::string> const names{unique_key("a"), unique_key("b")};
   constexpr int workers = 8, rounds = 25;

   // Only touched on the strand.
   std::map<std::string, int> inside;
   int overlaps = 0, failures = 0, off_strand = 0, finished = 0;
   std::set<std::thread::id> threads_seen;
   std::promise<void> all_done;

   auto worker = [&](std::string name) -> asio::awaitable<void> {
      for (int i = 0; i < rounds; ++i) {
         auto [ec, l] = co_await c->async_lock(name, {.ttl = 10s, .wait = 20s}, tuple);
         off_strand += !strand.running_in_this_thread();
         threads_seen.insert(std::this_thread::get_id());
         if (ec) {
            ++failures;
            continue;
         }
         overlaps += ++inside[name] > 1;
         // Hold it across a suspension, so that other workers run meanwhile.
         asio::steady_timer t{strand, 200us};
         co_await t.async_wait(asio::use_awaitable);
         if (i % 5 == 0) {
            auto [xec] = co_await c->async_extend(l, 10s, tuple);
            failures += !!xec;
         }
         --inside[name];
         auto [uec] = co_await c->async_unlock(l, tuple);
         off_strand += !strand.running_in_this_thread();
         failures += !!uec;
      }
   };
   for (int w = 0; w < workers; ++w)
      asio::co_spawn(strand, worker(names[w % names.size()]), [&](std::exception_ptr e) {
         failures += e != nullptr;
         if (++finished == workers)
            all_done.set_value();
      });

   // The client is destroyed on its strand too; then the threads are let go.
   bool const done = run_on_4_threads(ioc, all_done.get_future(), c);
   check_outcome(done, overlaps, failures, off_strand, srv, names);
   BOOST_TEST_MESSAGE("completions ran on " << threads_seen.size() << " threads");
}

// The pattern of a thread-pool gateway: a strand per connection, one client on a strand of its
// own, and no hop by hand. Locks, extends, unlocks, permits, scoped locks and a cancelled
// wait_lost are started from 8 worker strands at once.
BOOST_AUTO_TEST_CASE(one_client_called_from_8_strands_of_an_io_context_run_by_4_threads)
{
   redis_server srv;
   asio::io_context ioc{4};
   std::optional<locksmith::client> c;
   c.emplace(asio::make_strand(ioc), locksmith::config{.nodes = {srv.url()}});
   std::vector<std::string> const names{unique_key("a"), unique_key("b")};
   auto const permits = unique_key("permits");
   constexpr int workers = 8, rounds = 50;

   // Touched from every strand: atomics.
   std::array<std::atomic<int>, 2> inside{};
   std::atomic<int> permit_holders{0}, overlaps{0}, failures{0}, off_strand{0}, finished{0};
   std::atomic<int> uncancelled{0};
   std::promise<void> all_done;

   auto worker = [&](strand_type strand, int w) -> asio::awaitable<void> {
      auto& in = inside[w % 2];
      auto const& name = names[w % 2];
      auto check = [&] { off_strand += !strand.running_in_this_thread(); };
      auto hold = [&](std::atomic<int>& count, int most) -> asio::awaitable<void> {
         overlaps += count.fetch_add(1) + 1 > most;
         // Held across a suspension, so that other workers run meanwhile.
         asio::steady_timer t{strand, 200us};
         co_await t.async_wait(asio::use_awaitable);
         count.fetch_sub(1);
      };
      for (int i = 0; i < rounds; ++i) {
         if (i % 5 == 3) {
            auto [ec] = co_await locksmith::async_with_lock(
               *c, name, {.ttl = 10s, .wait = 20s}, [&](lease&) { return hold(in, 1); }, tuple);
            check();
            failures += !!ec;
            continue;
         }
         if (i % 5 == 4) {
            auto [ec, p] =
               co_await c->async_acquire_permit(permits, 2, {.ttl = 10s, .wait = 20s}, tuple);
            check();
            if (!ec)
               co_await hold(permit_holders, 2);
            auto [uec] = co_await c->async_unlock(p, tuple);
            check();
            failures += !!ec + !!uec;
            continue;
         }
         auto [ec, l] = co_await c->async_lock(name, {.ttl = 10s, .wait = 20s}, tuple);
         check();
         if (ec) {
            ++failures;
            continue;
         }
         co_await hold(in, 1);
         if (i % 5 == 0) {
            auto [xec] = co_await c->async_extend(l, 10s, tuple);
            check();
            failures += !!xec;
         } else if (i % 5 == 1) {
            // Our cancellation, emitted on this strand, reaches the wait on the client's.
            asio::cancellation_signal stop;
            asio::steady_timer soon{strand, 1ms};
            soon.async_wait([&stop](error_code) { stop.emit(asio::cancellation_type::terminal); });
            auto [wec] = co_await l.async_wait_lost(
               asio::bind_cancellation_slot(stop.slot(), asio::as_tuple(asio::use_awaitable)));
            check();
            uncancelled += wec != asio::error::operation_aborted;
         }
         auto [uec] = co_await c->async_unlock(l, tuple);
         check();
         failures += !!uec;
         failures += c->metrics().acquisitions == 0;  // from this strand, while others count
      }
   };
   for (int w = 0; w < workers; ++w) {
      auto strand = asio::make_strand(ioc);
      asio::co_spawn(strand, worker(strand, w), [&](std::exception_ptr e) {
         failures += e != nullptr;
         if (++finished == workers)
            all_done.set_value();
      });
   }
   bool const done = run_on_4_threads(ioc, all_done.get_future(), c);
   check_outcome(done, overlaps, failures, off_strand, srv, names);
   BOOST_TEST(uncancelled == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_threads
