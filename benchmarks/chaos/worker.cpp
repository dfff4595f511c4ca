// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "worker.hpp"

#include <locksmith/locksmith.hpp>
#include "sansio/metrics.hpp"
#include "sansio/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <random>

namespace locksmith::bench {
namespace {
namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr auto deferred_tuple = asio::as_tuple(asio::deferred);

// The resource: an occupancy counter per name, and a register that takes only rising fences.
constexpr char const* enter_script = "return redis.call('INCR', KEYS[1])";
constexpr char const* leave_script = "return redis.call('DECR', KEYS[1])";
constexpr char const* fenced_write = R"(
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > last then redis.call('SET', KEYS[1], ARGV[1]) return 1 end
return 0)";

asio::awaitable<long long> eval(redis::connection& conn, char const* script, std::string const& key,
                                std::string arg = {})
{
   redis::request req;
   if (arg.empty())
      req.push("EVAL", script, 1, key);
   else
      req.push("EVAL", script, 1, key, arg);
   redis::response<long long> resp;
   auto [ec, n] = co_await conn.async_exec(req, resp, asio::as_tuple(asio::use_awaitable));
   if (ec || !std::get<0>(resp).has_value())
      co_return -1;
   co_return std::get<0>(resp).value();
}

void record_loss(shared_block& shm, clock_type::duration left)
{
   auto const slack = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
   ++shm.leases_lost;
   if (slack < 0)
      ++shm.negative_loss_slack;
   for (auto m = shm.min_loss_slack_us.load();
        slack < m && !shm.min_loss_slack_us.compare_exchange_weak(m, slack);) {}
}

// Watches one lease at a time for the loss signal (lease::async_wait_lost), and records there how
// much of the lease's validity was left: the watchdog must signal a loss before valid_until.
class loss_watch {
public:
   loss_watch(asio::any_io_executor ex, shared_block& shm)
       : st_{std::make_shared<state>(asio::steady_timer{ex})}
       , shm_{shm}
   {}
   // Should the worker's frame go first (an exception), a wait still pending reads no lease.
   ~loss_watch()
   {
      st_->lease = nullptr;
      st_->work = nullptr;
   }
   loss_watch(loss_watch const&) = delete;
   loss_watch& operator=(loss_watch const&) = delete;

   // `l` and `work` must live until finish() has returned. A loss cancels `work` (the holder's
   // hold): the holder stops working at the loss signal, before valid_until.
   void start(locksmith::lease& l, asio::steady_timer& work)
   {
      st_->lease = &l;
      st_->work = &work;
      st_->pending = true;
      st_->done.expires_at(clock_type::time_point::max());
      l.async_wait_lost([st = st_, &shm = shm_](locksmith::error_code ec) {
         if (!ec && st->lease)
            record_loss(shm, st->lease->valid_until() - clock_type::now());
         if (!ec && st->work)
            st->work->cancel();
         st->pending = false;
         st->done.cancel();
      });
   }

   // Once the lease was released (the wait then completes with operation_aborted) or lost.
   asio::awaitable<void> finish()
   {
      if (st_->pending)
         co_await st_->done.async_wait(asio::as_tuple(asio::use_awaitable));
      st_->lease = nullptr;
      st_->work = nullptr;
   }

private:
   struct state {
      asio::steady_timer done;  // cancelled when the wait has completed
      locksmith::lease* lease = nullptr;
      asio::steady_timer* work = nullptr;
      bool pending = false;
   };
   std::shared_ptr<state> st_;
   shared_block& shm_;
};

// Enters the resource, makes a fenced write, holds for a while (unless the lease was lost
// meanwhile: the loss ends the hold) and leaves.
asio::awaitable<void> hold_the_resource(chaos_options const& o, redis::connection& resource,
                                        shared_block& shm, locksmith::lease& l,
                                        asio::steady_timer& hold, std::string const& name,
                                        std::mt19937& rng)
{
   auto const occupancy = co_await eval(resource, enter_script, "occ:" + name);
   if (occupancy > 1) {
      ++shm.overlaps;
      auto const i = shm.overlap_count++;
      if (i < max_stamps)
         shm.overlap_at[i] = now_ns();
   }
   // An unfenced lease (--no-fence) has no token to write: the occupancy counter alone judges.
   auto const wrote = l.has_fencing_token() ? co_await eval(resource, fenced_write, "fence:" + name,
                                                            std::to_string(l.fencing_token()))
                                            : 1;
   if (wrote == 0)
      ++shm.stale_writes;
   if (occupancy < 0 || wrote < 0)
      ++shm.resource_errors;
   if (!l.lost()) {
      hold.expires_after(
         std::chrono::microseconds{rng() % (1000u * static_cast<unsigned>(o.hold_ms))});
      co_await hold.async_wait(asio::as_tuple(asio::use_awaitable));
   }
   if (co_await eval(resource, leave_script, "occ:" + name) < 0)
      ++shm.resource_errors;
}

// Times one grant of name `i` (one of the first max_tracked_names): the gap since the later of
// its previous grant and this attempt's start, and its first grant after an operation began.
void record_grant(shared_block& shm, std::size_t i, std::int64_t started, std::int64_t now)
{
   if (i >= max_tracked_names)
      return;
   auto const gap = now - std::max(shm.last_grant_ns[i].exchange(now), started);
   for (auto m = shm.max_gap_ns.load(); gap > m && !shm.max_gap_ns.compare_exchange_weak(m, gap);) {
   }
   // An entry before the mark is from an earlier operation: this grant is the first since.
   auto const mark = shm.op_mark_ns.load();
   auto& first = shm.first_grant_after_mark_ns[i];
   for (auto f = first.load(); f < mark && now >= mark && !first.compare_exchange_weak(f, now);) {}
}

// Whether an operation ran during an attempt (the epoch is odd while one runs, and changes when
// one starts or ends): 1 if so, else 0.
std::size_t during_operation(shared_block const& shm, std::int64_t epoch_before)
{
   return (epoch_before % 2) != 0 || shm.op_epoch.load() != epoch_before ? 1 : 0;
}

void record_wait(shared_block& shm, std::int64_t epoch_before, std::int64_t started,
                 std::int64_t now)
{
   auto const ms = static_cast<std::size_t>((now - started) / 1'000'000);
   ++shm.wait_ms[during_operation(shm, epoch_before)][std::min(ms, wait_buckets - 1)];
}

std::string name_of(chaos_options const& o, std::size_t i)
{
   return o.labels.empty() ? "n" + std::to_string(i) : o.labels[i];
}

// With LOCKSMITH_CHAOS_LOG, a failed lock or unlock, each node's vote, and every node's problem
// (node_report::problem: its call's failure, the server's words); report::message() names the
// first only.
void log_error(char const* what, std::string const& name, error_code ec, locksmith::report const& r)
{
   if (!std::getenv("LOCKSMITH_CHAOS_LOG"))
      return;
   std::string said;
   std::string votes;  // a letter per node, in config order: yes, no, failed, or - (none)
   for (auto const& n : r.nodes) {
      votes += "-ynf"[static_cast<int>(n.vote)];
      if (auto p = n.problem(); !p.empty())
         said += (said.empty() ? "" : "; ") + p;
   }
   std::fprintf(stderr, "%.3f %s of %s: %s: votes %s: %s\n", static_cast<double>(now_ns()) / 1e9,
                what, name.c_str(), ec.message().c_str(), votes.c_str(), said.c_str());
}

asio::awaitable<void> worker(chaos_options const& o, locksmith::client& locks,
                             redis::connection& resource, shared_block& shm, unsigned seed)
{
   std::mt19937 rng{seed};
   auto const ex = co_await asio::this_coro::executor;
   asio::steady_timer hold{ex};
   loss_watch watch{ex, shm};
   auto const opts = locksmith::lock_options{.ttl = std::chrono::milliseconds{o.ttl_ms},
                                             .wait = std::chrono::milliseconds{o.wait_ms},
                                             .fence = o.fence,
                                             .owner = o.owner};
   auto const names = o.labels.empty() ? static_cast<std::size_t>(o.names) : o.labels.size();
   while (!shm.stop.load()) {
      auto const index = rng() % names;
      auto const name = name_of(o, index);
      auto const t0 = clock_type::now();
      auto const epoch = shm.op_epoch.load();
      ++shm.attempts;
      locksmith::report diag;
      auto reported = opts;
      reported.diag = &diag;
      auto [ec, l] = co_await locks.async_lock(name, reported, deferred_tuple);
      if (clock_type::now() - t0 > opts.wait + 1s)
         ++shm.hangs;
      if (ec) {
         log_error("lock", name, ec, diag);
         ++shm.lock_errors;
         ++shm.lock_error_kind[during_operation(shm, epoch)][error_kind_index(ec)];
         continue;
      }
      auto const granted = now_ns();
      ++shm.grants;
      record_grant(shm, index, t0.time_since_epoch().count(), granted);
      record_wait(shm, epoch, t0.time_since_epoch().count(), granted);
      watch.start(l, hold);
      co_await hold_the_resource(o, resource, shm, l, hold, name, rng);
      locksmith::report udiag;
      auto [uec] = co_await locks.async_unlock(l, udiag, deferred_tuple);
      if (uec && uec != locksmith::error::lease_lost) {
         log_error("unlock", name, uec, udiag);
         ++shm.unlock_errors;
         ++shm.unlock_error_kind[error_kind_index(uec)];
      }
      // The watch reads the lease when it fires: keep the lease until the wait has completed.
      co_await watch.finish();
      ++shm.cycles;
   }
}

}  // namespace

// One worker process: its own client (connections, local queue), C coroutines.
int run_worker_process(chaos_options const& o, std::vector<std::string> const& nodes,
                       std::string const& resource_url, shared_block& shm, int index)
{
   asio::io_context ioc{1};
   locksmith::config cfg{.nodes = nodes,
                         .prefix = "chaos:",
                         .restart_quarantine = std::chrono::milliseconds{o.quarantine_ms},
                         .wait_replicas = o.wait_replicas};
   // LOCKSMITH_CHAOS_LOG=1: the clients' log on stderr, stamped, to see why a run failed (2: with
   // the debug lines too, such as each redirection).
   char const* log = std::getenv("LOCKSMITH_CHAOS_LOG");
   if (log && *log == '2')
      cfg.min_log_level = locksmith::log_level::debug;
   if (log && (*log == '1' || *log == '2'))
      cfg.logger = [index](locksmith::log_level, std::string_view line) {
         std::fprintf(stderr, "%.3f worker %d: %.*s\n", static_cast<double>(now_ns()) / 1e9, index,
                      static_cast<int>(line.size()), line.data());
      };
   locksmith::client locks{ioc.get_executor(), cfg};
   redis::connection resource{ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   auto const where = locksmith::detail::parse_url(resource_url);
   if (!where)
      return 2;
   rc.addr = {where->host, where->port};
   resource.async_run(rc, asio::detached);
   int running = o.coroutines;
   for (int i = 0; i < o.coroutines; ++i)
      asio::co_spawn(ioc,
                     worker(o, locks, resource, shm,
                            static_cast<unsigned>(index * 1000 + i) ^ std::random_device{}()),
                     [&](std::exception_ptr e) {
                        if (e)
                           ++shm.lock_errors;
                        if (--running > 0)
                           return;
                        // Every worker is done: finish what the client owns, then stop.
                        locks.async_close([&](locksmith::error_code) {
                           resource.cancel();
                           ioc.stop();
                        });
                     });
   ioc.run();
   return 0;
}

std::size_t error_kind_index(boost::system::error_code const& ec)
{
   auto const v = static_cast<std::size_t>(ec.value());
   return ec.category() == locksmith::error_category() && v < error_kinds ? v : 0;
}

std::string error_kind_name(std::size_t i)
{
   // The metrics' labels (sansio/metrics.hpp), so that a report and a scrape name errors alike.
   return i == 0 ? "other"
                 : locksmith::detail::error_label(
                      locksmith::error_code{static_cast<int>(i), locksmith::error_category()});
}

void begin_operation(shared_block& shm)
{
   shm.op_mark_ns = now_ns();
   ++shm.op_epoch;
   if (char const* log = std::getenv("LOCKSMITH_CHAOS_LOG"); log && *log == '1')
      std::fprintf(stderr, "%.3f harness: an operation begins\n",
                   static_cast<double>(shm.op_mark_ns.load()) / 1e9);
}

void end_operation(shared_block& shm)
{
   ++shm.op_epoch;
}

}  // namespace locksmith::bench
