// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "threads.hpp"
#include "tokens.hpp"

#include "report.hpp"

#include "transport/redis_config.hpp"

#include "sansio/url.hpp"

#include <locksmith/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/consign.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace locksmith::bench {
namespace {

namespace asio = boost::asio;
namespace redis = boost::redis;
using clock_type = std::chrono::steady_clock;

// What the callers of a run share, across threads.
struct tally {
   std::atomic<bool> stop{false};
   std::atomic<long> cycles{0};
   std::atomic<long> failures{0};
   std::mutex first_mutex;
   std::string first;  // the first failure's message

   void fail(std::string const& what)
   {
      std::lock_guard const lock{first_mutex};
      if (failures++ == 0)
         first = what;
   }
};

asio::awaitable<void> pause_after_failure()
{
   asio::steady_timer t{co_await asio::this_coro::executor, std::chrono::milliseconds{10}};
   co_await t.async_wait(use_tuple);
}

// A caller: takes and gives back its own name until the stop, wherever it runs.
asio::awaitable<void> lock_loop(client& c, std::string name, tally& t)
{
   while (!t.stop) {
      auto [ec, l] = co_await c.async_lock(name, {}, use_tuple);
      if (!ec)
         std::tie(ec) = co_await c.async_unlock(l, use_tuple);
      if (ec) {
         t.fail(ec.message());
         co_await pause_after_failure();
         continue;
      }
      ++t.cycles;
   }
}

// The floor's caller: SET NX PX and DEL by hand on one connection (raw.cpp's cycle).
asio::awaitable<void> raw_loop(redis::connection& conn, std::string key, tally& t)
{
   redis::request set, del;
   set.push("SET", key, "raw", "NX", "PX", "30000");
   del.push("DEL", key);
   redis::response<std::optional<std::string>> set_resp;
   redis::response<long long> del_resp;
   while (!t.stop) {
      auto [ec, n] = co_await conn.async_exec(set, set_resp, use_tuple);
      auto const& taken = std::get<0>(set_resp);
      if (!ec && (!taken.has_value() || !taken.value()))
         ec = asio::error::try_again;  // not set: someone holds our key
      if (!ec)
         std::tie(ec, n) = co_await conn.async_exec(del, del_resp, use_tuple);
      if (ec) {
         t.fail(ec.message());
         co_await pause_after_failure();
         continue;
      }
      ++t.cycles;
   }
}

// An io_context, its threads, and what the callers use on it: a client, or a raw connection.
struct lane {
   explicit lane(int threads)
       : ioc{threads}
   {}
   asio::io_context ioc;
   asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
   std::optional<client> c;
   std::shared_ptr<redis::connection> conn;
   std::vector<std::thread> threads;

   void start(int n)
   {
      for (int i = 0; i < n; ++i)
         threads.emplace_back([this] { ioc.run(); });
   }
   // Ends the client or the connection on its own executor, then the threads.
   void finish()
   {
      std::promise<void> ended;
      auto ex = c ? c->get_executor() : asio::any_io_executor{ioc.get_executor()};
      asio::post(ex, [&] {
         c.reset();
         if (conn)
            conn->cancel();
         ended.set_value();
      });
      ended.get_future().wait_for(std::chrono::seconds{10});
      work.reset();
      ioc.stop();
      for (auto& t : threads)
         t.join();
   }
};

// The cycles per second from the end of the warm-up on, then the stop; waits for the callers.
double measure(tally& t, threads_plan const& plan, std::future<void> ended)
{
   std::this_thread::sleep_for(plan.warmup);
   auto const c0 = t.cycles.load();
   auto const t0 = clock_type::now();
   std::this_thread::sleep_for(plan.duration);
   auto const c1 = t.cycles.load();
   auto const seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
   t.stop = true;
   if (ended.wait_for(std::chrono::seconds{10}) != std::future_status::ready)
      t.fail("a caller did not stop within 10 s");
   return static_cast<double>(c1 - c0) / seconds;
}

// Counts down the callers; the last one's end is the run's.
struct countdown {
   std::atomic<int> left;
   std::promise<void> done;
   void operator()(std::exception_ptr e)
   {
      if (e)
         std::cerr << "locksmith-bench: a caller threw\n";
      if (--left == 0)
         done.set_value();
   }
};

enum class way { raw, per_thread, shared };

char const* name_of(way w)
{
   return w == way::raw ? "raw" : w == way::per_thread ? "client_per_thread" : "shared_client";
}

// One run: `callers` coroutines on `threads` threads, as `w` places them.
double run_way(way w, int threads, int callers, threads_plan const& plan, std::string const& url,
               tally& t)
{
   auto const prefix = "locksmith-bench:threads:" + std::to_string(::getpid()) + ":" +
                       std::string{name_of(w)} + std::to_string(threads) + ":";
   countdown cd{.left = callers, .done = {}};
   std::vector<std::unique_ptr<lane>> lanes;
   int const n_lanes = w == way::shared ? 1 : threads;
   for (int i = 0; i < n_lanes; ++i) {
      auto& l = *lanes.emplace_back(std::make_unique<lane>(w == way::shared ? threads : 1));
      if (w == way::raw) {
         l.conn = std::make_shared<redis::connection>(l.ioc.get_executor(),
                                                      redis::logger{redis::logger::level::crit});
         l.conn->async_run(detail::make_redis_config(*detail::parse_url(url), config{}, "bench"),
                           asio::consign(asio::detached, l.conn));
      } else {
         // Shared: the client on a strand of its own, each caller on another (a gateway's).
         auto ex = w == way::shared ? asio::any_io_executor{asio::make_strand(l.ioc)}
                                    : asio::any_io_executor{l.ioc.get_executor()};
         l.c.emplace(ex, config{.nodes = {url}});
      }
   }
   for (int k = 0; k < callers; ++k) {
      auto& l = *lanes[k % n_lanes];
      auto const name = prefix + std::to_string(k);
      auto body = w == way::raw ? raw_loop(*l.conn, name, t) : lock_loop(*l.c, name, t);
      auto ex = w == way::shared ? asio::any_io_executor{asio::make_strand(l.ioc)}
                                 : asio::any_io_executor{l.ioc.get_executor()};
      asio::co_spawn(ex, std::move(body), [&cd](std::exception_ptr e) { cd(e); });
   }
   for (auto& l : lanes)
      l->start(w == way::shared ? threads : 1);
   double const rate = measure(t, plan, cd.done.get_future());
   for (auto& l : lanes)
      l->finish();
   return rate;
}

// Where one caller runs, against the client: on its executor (one thread); on its strand, or on
// another strand, of an io_context that 2 threads run; on another io_context's thread.
enum class placement { same_executor, same_strand, other_strand, other_thread };
constexpr placement placements[] = {placement::same_executor, placement::same_strand,
                                    placement::other_strand, placement::other_thread};

char const* name_of(placement p)
{
   constexpr char const* names[] = {"same_executor", "same_strand", "other_strand", "other_thread"};
   return names[static_cast<int>(p)];
}

// What a placement's cycle is compared with: a call from another thread costs what the same
// call from the client's own executor, in the same threading, does not.
placement baseline_of(placement p)
{
   return p == placement::other_strand ? placement::same_strand : placement::same_executor;
}

// One caller's uncontended cycle, in microseconds.
double cycle_us(placement p, threads_plan const& plan, std::string const& url, tally& t)
{
   auto const name = "locksmith-bench:threads:" + std::to_string(::getpid()) + ":cycle";
   bool const pool = p == placement::same_strand || p == placement::other_strand;
   lane a{pool ? 2 : 1};
   std::optional<lane> b;
   auto const strand = asio::make_strand(a.ioc);
   auto ex = pool ? asio::any_io_executor{strand} : asio::any_io_executor{a.ioc.get_executor()};
   a.c.emplace(ex, config{.nodes = {url}});
   countdown cd{.left = 1, .done = {}};
   asio::any_io_executor caller = ex;
   if (p == placement::other_strand)
      caller = asio::make_strand(a.ioc);
   if (p == placement::other_thread)
      caller = b.emplace(1).ioc.get_executor();
   asio::co_spawn(caller, lock_loop(*a.c, name, t), [&cd](std::exception_ptr e) { cd(e); });
   a.start(pool ? 2 : 1);
   if (b)
      b->start(1);
   double const rate = measure(t, plan, cd.done.get_future());
   a.finish();
   if (b)
      b->finish();
   return rate > 0 ? 1e6 / rate : 0;
}

bool report_run(std::string const& line, tally const& t, bool json)
{
   if (!line.empty())
      std::cout << line << (json ? "\n" : "") << std::flush;
   if (t.failures > 0 || t.cycles == 0) {
      std::cerr << "locksmith-bench: sanity check failed for threads: " << t.failures
                << " failures (first: " << t.first << "), " << t.cycles << " cycles\n";
      return false;
   }
   return true;
}

}  // namespace

bool run_threads(threads_plan const& plan, std::string const& url)
{
   bool sane = true;
   for (int n : plan.threads) {
      double raw = 0;
      for (auto w : {way::raw, way::per_thread, way::shared}) {
         tally t;
         double const rate = run_way(w, n, plan.workers, plan, url, t);
         if (w == way::raw)
            raw = rate;
         auto const of_raw = raw > 0 ? rate / raw : 0;
         std::string line =
            plan.json ? R"({"scenario":"threads","way":")" + std::string{name_of(w)} +
                           R"(","threads":)" + std::to_string(n) + R"(,"callers":)" +
                           std::to_string(plan.workers) + R"(,"acquisitions_per_s":)" +
                           number(rate) + R"(,"of_raw":)" + number(of_raw) + "}"
                      : "threads  " + std::string{name_of(w)} + "  threads=" + std::to_string(n) +
                           "  " + number(rate) + "/s  of raw " + number(of_raw) + "\n";
         sane = report_run(line, t, plan.json) && sane;
      }
   }
   // Interleaved rounds, so that a neighbour's load falls on every placement alike.
   std::vector<double> us[std::size(placements)];
   for (int r = 0; r < plan.rounds; ++r)
      for (auto p : placements) {
         tally t;
         us[static_cast<int>(p)].push_back(cycle_us(p, plan, url, t));
         sane = report_run("", t, plan.json) && sane;
      }
   auto median = [&](placement p) {
      auto v = us[static_cast<int>(p)];
      std::sort(v.begin(), v.end());
      return v.empty() ? 0 : v[v.size() / 2];
   };
   for (auto p : placements) {
      double const m = median(p), base = median(baseline_of(p));
      double const over = base > 0 ? m / base : 0;
      if (plan.json)
         std::cout << R"({"scenario":"threads","caller":")" << name_of(p)
                   << R"(","cycle_us_median":)" << number(m) << R"(,"rounds":)" << plan.rounds
                   << R"(,"baseline":")" << name_of(baseline_of(p)) << R"(","over_baseline":)"
                   << number(over) << "}\n";
      else
         std::cout << "threads  caller on " << name_of(p) << "  cycle " << number(m)
                   << " us (median of " << plan.rounds << ")  x " << name_of(baseline_of(p)) << " "
                   << number(over) << "\n";
   }
   return sane;
}

}  // namespace locksmith::bench
