// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// cron_once: run a cron job on one machine only. Every machine starts it from the same crontab
// line at the same minute; the one that takes the lock runs the job, the others find the lock
// taken and exit at once (status 0: the job is being done). While the job runs, the watchdog
// renews the lease every ttl/3. If renewal fails (Redis unreachable), the lease is lost and the
// job cancelled before the key can expire, so no other machine starts it while this one runs
// it. A key deleted behind our back is noticed at the next renewal. A lost lease exits with 76.
//
// Run:    ./build/examples/cron_once redis://127.0.0.1:6379 [job-seconds]   (in two shells)
// Watch:  redis-cli --scan --pattern 'locksmith:*'
// Lose the lease on purpose while the job runs: redis-cli del 'locksmith:{cron/nightly-report}'
// or make Redis stop answering for 7 s: redis-cli client pause 7000
// Ctrl-C cancels the job and releases the lock (status 130).
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using locksmith::error;
using std::chrono::milliseconds;

// The job: a few one-second steps. A real job would hand its fencing token to whatever it
// writes (see fencing_token.cpp).
asio::awaitable<void> nightly_report(locksmith::lease& l, int seconds)
{
   std::cout << "running the job, fencing token " << l.fencing_token() << '\n';
   asio::steady_timer t{co_await asio::this_coro::executor};
   for (int i = 1; i <= seconds; ++i) {
      t.expires_after(1s);
      // A lost lease or Ctrl-C cancels this wait: the job stops here, with an exception.
      co_await t.async_wait();
      auto const left = l.valid_until() - locksmith::lease::clock::now();
      std::cout << "  step " << i << '/' << seconds << ", lease valid for another "
                << std::chrono::duration_cast<milliseconds>(left).count() << " ms\n";
   }
}

// Ctrl-C cancels this, and async_with_lock passes the cancellation on to the job.
asio::awaitable<int> co_main(example::context& ctx)
{
   int const seconds = ctx.args.empty() ? 10 : std::atoi(ctx.args[0].c_str());
   // A short TTL, renewed every 2 s: a crashed machine frees the job within 6 s. wait = 0 makes
   // one attempt, as async_try_lock does: we never queue behind the machine that runs the job.
   auto const opts = locksmith::lock_options{.ttl = 6s, .wait = 0ms};
   auto [ec] = co_await locksmith::async_with_lock(
      ctx.locks, "cron/nightly-report", opts,
      [seconds](locksmith::lease& l) { return nightly_report(l, seconds); }, asio::as_tuple);

   if (!ec) {
      std::cout << "job done, lock released\n";
      co_return 0;
   }
   if (ec == error::lock_taken) {
      std::cout << "another machine runs the job: nothing to do\n";
      co_return 0;
   }
   if (ec == error::lease_lost) {
      std::cout << "lease lost (renewal failed, or the key was taken): the job was cancelled\n";
      co_return 76;
   }
   if (ec == asio::error::operation_aborted) {
      std::cout << "interrupted: the job was cancelled and the lock released\n";
      co_return 130;
   }
   // quorum_unreachable (Redis down), unexpected_reply... : the job did not run.
   std::cout << "could not run the job: " << ec.message() << '\n';
   co_return 69;
}
