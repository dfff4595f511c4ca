// One client used from an io_context that 4 threads run, through a strand, as client.hpp says
// users must: every operation and completion stays on the strand, and mutual exclusion holds.
// Built with -fsanitize=thread (scripts/test.sh --sanitize thread), this is the test that lets
// the thread sanitizer look at the library's handlers on several threads.
#include "support/integration.hpp"

#include <future>
#include <map>
#include <optional>
#include <set>
#include <thread>

BOOST_AUTO_TEST_SUITE(threads, *needs_redis_server())

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

   auto work = asio::make_work_guard(ioc);
   std::vector<std::thread> pool;
   for (int i = 0; i < 4; ++i)
      pool.emplace_back([&ioc] { ioc.run(); });
   bool const done = all_done.get_future().wait_for(60s) == std::future_status::ready;
   // The client is destroyed on its strand too; then the threads are let go.
   std::promise<void> closed;
   asio::post(strand, [&] {
      c.reset();
      closed.set_value();
   });
   closed.get_future().wait_for(10s);
   work.reset();
   ioc.stop();
   for (auto& t : pool)
      t.join();

   BOOST_REQUIRE_MESSAGE(done, "the workers did not finish within 60 s");
   BOOST_TEST(overlaps == 0);
   BOOST_TEST(failures == 0);
   BOOST_TEST(off_strand == 0);
   BOOST_TEST_MESSAGE("completions ran on " << threads_seen.size() << " threads");
   for (auto const& n : names)
      BOOST_TEST(srv.text({"EXISTS", lock_key(n)}) == "0");
}

BOOST_AUTO_TEST_SUITE_END()
