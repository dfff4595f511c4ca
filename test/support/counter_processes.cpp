#include "support/counter_processes.hpp"

#include "support/blocking_client.hpp"
#include "support/config.hpp"

#include <locksmith/client.hpp>
#include <locksmith/detail/acquire_kind.hpp>
#include "sansio/keys.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

namespace locksmith::test {
namespace {

namespace asio = boost::asio;
namespace redis = boost::redis;
using clock_type = std::chrono::steady_clock;
constexpr auto tuple = asio::as_tuple(asio::deferred);

double ms(clock_type::duration d)
{
   return std::chrono::duration<double, std::milli>(d).count();
}

// What one child saw.
struct tally {
   int finished = 0, lock_failures = 0, unlock_unconfirmed = 0, unlock_misreported = 0,
       unlock_other = 0, overruns = 0, exceptions = 0, counter_failures = 0, bound_broken = 0;
   double longest_wait_ms = 0;

   int status(counter_run const& r) const
   {
      using c = child_trouble;
      bool const unlock_failed =
         unlock_other > 0 || (unlock_unconfirmed > 0 && !r.unconfirmed_unlock_ok);
      return (finished < r.workers ? c::unfinished : 0) | (lock_failures ? c::lock_failed : 0) |
             (unlock_misreported ? c::unlock_misreported : 0) | (overruns ? c::overrun : 0) |
             (exceptions ? c::exception : 0) | (unlock_failed ? c::unlock_failed : 0) |
             (counter_failures ? c::counter_failed : 0) | (bound_broken ? c::bound_broken : 0);
   }
};

void report_unlock_error(error_code ec, bool valid, report const& diag)
{
   std::string votes;
   for (auto const& n : diag.nodes)
      votes += " " + std::to_string(static_cast<int>(n.vote)) + "/" + n.ec.message() + "/" +
               std::to_string(n.latency.count()) + "us";
   std::fprintf(
      stderr, "child %d: unlock of a lease %s: %s; votes (0 none 1 yes 2 no 3 failed):%s\n",
      ::getpid(), valid ? "still valid" : "already invalid", ec.message().c_str(), votes.c_str());
}

// GET, yield, SET + 1: a read-modify-write that other coroutines and processes can interleave
// with, unless the lock keeps them out.
asio::awaitable<bool> increment(redis::connection& data, std::string const& counter)
{
   redis::request get;
   get.push("GET", counter);
   redis::response<std::optional<std::int64_t>> value;
   auto [gec, gn] = co_await data.async_exec(get, value, tuple);
   if (gec || std::get<0>(value).has_error())
      co_return false;
   // Let the other coroutines and processes run in the middle of the read-modify-write.
   auto ex = co_await asio::this_coro::executor;
   co_await asio::post(ex, asio::use_awaitable);
   redis::request set;
   set.push("SET", counter, std::get<0>(value).value().value_or(0) + 1);
   auto [sec, sn] = co_await data.async_exec(set, redis::ignore, tuple);
   co_return !sec;
}

using of = detail::lease_kind::of;

// One atomic look at the fair queue and one line of the turns: the holder's token, then the queue.
constexpr char const* record_turn_text = R"lua(
local line = redis.call('LRANGE', KEYS[1], 0, -1)
table.insert(line, 1, ARGV[1])
return redis.call('RPUSH', KEYS[2], table.concat(line, ' '))
)lua";

// Records the holder's turn (counter_run::record_turns). The queue cannot lose its head while
// the lock is held, only gain waiters at its end: the next holder must be that head.
asio::awaitable<bool> record_turn(redis::connection& data, counter_run const& r,
                                  std::string const& name, std::string const& token)
{
   redis::request req;
   req.push("EVAL", record_turn_text, 2, detail::queue_key(config{}.prefix, name),
            r.counter + ":turns", token);
   auto [ec, n] = co_await data.async_exec(req, redis::ignore, tuple);
   co_return !ec;
}

// Counts a holder of a shared kind in, checks the kind's bound, holds for r.hold, and counts it
// out: true when the bound held. Readers and permits count in `counter`:holders, writers in
// `counter`:writers.
asio::awaitable<bool> occupy(redis::connection& data, counter_run const& r, bool writer, tally& t)
{
   auto const holders = r.counter + ":holders";
   auto const writers = r.counter + ":writers";
   redis::request in;
   in.push("INCR", writer ? writers : holders);
   in.push("GET", writer ? holders : writers);
   redis::response<std::int64_t, std::optional<std::int64_t>> got;
   auto [ec, n] = co_await data.async_exec(in, got, tuple);
   if (ec || std::get<0>(got).has_error() || std::get<1>(got).has_error()) {
      ++t.counter_failures;
      co_return true;
   }
   auto const mine = std::get<0>(got).value();
   auto const others = std::get<1>(got).value().value_or(0);
   bool const ok = writer ? (mine == 1 && others == 0)
                          : (others == 0 && (r.kind.what != of::permit ||
                                             mine <= static_cast<std::int64_t>(r.kind.permits)));
   redis::request out;
   // The highest count seen (ZADD GT, in a script: Redis 6.0 has no GT). It answers 1, not nil,
   // which the reply's reading would take for an error.
   if (!writer)
      out.push("EVAL",
               "local s = tonumber(redis.call('ZSCORE', KEYS[1], 'holders')) "
               "if not s or s < tonumber(ARGV[1]) then redis.call('ZADD', KEYS[1], ARGV[1], "
               "'holders') end return 1",
               1, r.counter + ":max", mine);
   // Others may enter meanwhile, if the bound lets them.
   asio::steady_timer hold{data.get_executor(), r.hold};
   co_await hold.async_wait(tuple);
   out.push("DECR", writer ? writers : holders);
   auto [oec, on] = co_await data.async_exec(out, redis::ignore, tuple);
   if (oec)
      ++t.counter_failures;
   co_return ok;
}

// An unlock may fail to confirm a quorum (quorum_unreachable) and still be right when nodes freeze:
// a third node may hold, for a moment, the other process's key from a split vote that it is about
// to release. But not_owner or lease_expired for a lease that was still valid when the unlock
// began is wrong: nobody else held a quorum, and our key had not expired (see
// fanout/a_transient_failure_on_a_bare_quorum_is_not_a_lost_key).
asio::awaitable<void> worker(client& c, redis::connection& data, counter_run const& r, tally& t,
                             int index)
{
   bool const writer = r.kind.what == of::read && index < r.writers;
   auto const kind = writer ? detail::lease_kind{of::write} : r.kind;
   auto token = tuple;
   for (int i = 0; i < r.rounds; ++i) {
      auto const k = (index + i) % r.names;
      auto const name = r.name_of(k);
      auto const t0 = clock_type::now();
      auto [ec, l] = co_await detail::initiate_acquire(c, token, kind, name, r.lock);
      t.longest_wait_ms = std::max(t.longest_wait_ms, ms(clock_type::now() - t0));
      if (ec) {
         ++t.lock_failures;
         std::fprintf(stderr, "child %d: lock: %s\n", ::getpid(), ec.message().c_str());
         continue;
      }
      if (kind.what == of::lock) {
         if (!co_await increment(data, r.counter_of(k)))
            ++t.counter_failures;
         if (r.record_turns && !co_await record_turn(data, r, name, l.token()))
            ++t.counter_failures;
      } else if (!co_await occupy(data, r, writer, t)) {
         ++t.bound_broken;
      }
      if (!l.held())
         ++t.overruns;
      bool const valid = l.held();
      report diag;
      auto [uec] = co_await c.async_unlock(l, diag, tuple);
      if (!uec)
         continue;
      if (uec == error::quorum_unreachable)
         ++t.unlock_unconfirmed;
      else if (valid && (uec == error::not_owner || uec == error::lease_expired))
         ++t.unlock_misreported;
      else
         ++t.unlock_other;
      report_unlock_error(uec, valid, diag);
   }
   ++t.finished;
}

// The body of one child; returns its exit status.
int counter_child(counter_run const& r)
{
   asio::io_context ioc;
   client c{ioc.get_executor(), test_config(r.nodes, r.node_timeout)};
   redis::connection data{ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   rc.addr.port = std::to_string(r.counter_port);
   data.async_run(rc, asio::detached);
   tally t;
   for (int j = 0; j < r.workers; ++j)
      asio::co_spawn(ioc, worker(c, data, r, t, j), [&](std::exception_ptr e) {
         if (e)
            ++t.exceptions;
      });
   auto const until = clock_type::now() + r.child_budget;
   while (t.finished + t.exceptions < r.workers && ioc.run_one_until(until) != 0) {}
   data.cancel();
   std::fprintf(
      stderr,
      "child %d: %d/%d workers done; lock failures %d; unlocks unconfirmed %d, misreported %d, "
      "other errors %d; overruns %d; counter errors %d; bound broken %d; exceptions %d; longest "
      "wait %.1f ms\n",
      ::getpid(), t.finished, r.workers, t.lock_failures, t.unlock_unconfirmed,
      t.unlock_misreported, t.unlock_other, t.overruns, t.counter_failures, t.bound_broken,
      t.exceptions, t.longest_wait_ms);
   return t.status(r);
}

[[noreturn]] void child_main(pid_t parent, counter_run const& r)
{
   // Die with the test binary; re-check the parent in case it died before prctl took effect.
   if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      ::_exit(126);
   int status = child_trouble::exception;
   try {
      status = counter_child(r);
   } catch (std::exception const& e) {
      std::fprintf(stderr, "child %d: %s\n", ::getpid(), e.what());
   }
   std::fflush(stderr);
   ::_exit(status);  // no destructors, no Boost.Test teardown, no flush of the parent's buffers
}

std::string describe(int status)
{
   if (status == -1)
      return "did not finish in time, killed";
   if (WIFSIGNALED(status))
      return "killed by signal " + std::to_string(WTERMSIG(status));
   int const code = WEXITSTATUS(status);
   std::string what = "exit status " + std::to_string(code) + ":";
   using c = child_trouble;
   constexpr std::pair<int, char const*> bits[] = {
      {c::unfinished, " unfinished"},
      {c::lock_failed, " lock failed"},
      {c::unlock_misreported, " unlock of a valid lease said not_owner or lease_expired"},
      {c::overrun, " write after the validity"},
      {c::exception, " exception"},
      {c::unlock_failed, " unlock failed"},
      {c::counter_failed, " counter GET or SET failed"},
      {c::bound_broken, " more holders at once than the kind allows"}};
   for (auto const& [bit, text] : bits)
      if (code & bit)
         what += text;
   return what;
}

}  // namespace

counter_outcome run_counter_processes(counter_run const& r, std::function<void()> const& meanwhile)
{
   // Whatever is buffered would be written once more by each child.
   std::cout.flush();
   std::cerr.flush();
   std::fflush(nullptr);
   std::vector<pid_t> children;
   for (int p = 0; p < r.processes; ++p) {
      pid_t const parent = ::getpid();
      pid_t const pid = ::fork();
      BOOST_REQUIRE_MESSAGE(pid >= 0, "fork failed");
      if (pid == 0)
         child_main(parent, r);
      children.push_back(pid);
   }
   counter_outcome o;
   o.statuses.assign(children.size(), -1);
   auto const t0 = clock_type::now();
   auto running = [&] { return std::count(o.statuses.begin(), o.statuses.end(), -1); };
   while (running() > 0 && clock_type::now() < t0 + r.deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
      if (meanwhile)
         meanwhile();
      for (std::size_t p = 0; p < children.size(); ++p) {
         int st = 0;
         if (o.statuses[p] == -1 && ::waitpid(children[p], &st, WNOHANG) == children[p])
            o.statuses[p] = st;
      }
   }
   o.took = clock_type::now() - t0;
   for (std::size_t p = 0; p < children.size(); ++p) {
      if (o.statuses[p] != -1)
         continue;
      ::kill(children[p], SIGKILL);
      int st = 0;
      while (::waitpid(children[p], &st, 0) < 0 && errno == EINTR) {}
   }
   return o;
}

void check_children(counter_outcome const& o, counter_run const& r)
{
   BOOST_TEST_MESSAGE(r.increments() << " increments by " << r.processes << " processes in "
                                     << ms(o.took) << " ms");
   for (std::size_t p = 0; p < o.statuses.size(); ++p) {
      int const st = o.statuses[p];
      BOOST_TEST((st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0),
                 "child " << p << ": " << describe(st));
   }
}

counter_outcome run_and_check_children(counter_run const& r)
{
   auto o = run_counter_processes(r);
   check_children(o, r);
   return o;
}

std::vector<std::vector<std::string>> recorded_turns(counter_run const& r)
{
   blocking_client c{"127.0.0.1", std::to_string(r.counter_port)};
   auto const got = c.command({"LRANGE", r.counter + ":turns", "0", "-1"});
   std::vector<std::vector<std::string>> turns;
   for (auto const& line : got.elements) {
      std::istringstream in{line.str};
      turns.emplace_back(std::istream_iterator<std::string>{in},
                         std::istream_iterator<std::string>{});
   }
   return turns;
}

long long highest_occupancy(counter_run const& r)
{
   blocking_client c{"127.0.0.1", std::to_string(r.counter_port)};
   auto const got = c.command({"ZSCORE", r.counter + ":max", "holders"});
   return got.type == reply::kind::nil ? 0 : std::stoll(got.str);
}

}  // namespace locksmith::test
