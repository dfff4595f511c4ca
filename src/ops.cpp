// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The bodies of the client's operations: acquire (with waiting), release and extend.
#include "core.hpp"

#include <locksmith/detail/backoff.hpp>
#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/retry.hpp>
#include <locksmith/detail/token.hpp>
#include <locksmith/detail/validate.hpp>
#include <locksmith/detail/validity.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// A century: longer waits and holds are forever, and stay clear of the clock's overflow.
constexpr milliseconds forever = std::chrono::hours{24 * 365 * 100};

// A waiter that cannot reach a quorum, or whose lock has no TTL, looks again this often.
constexpr milliseconds probe_interval{100};

// The fence key outlives the lock by this much; after that the server clock keeps fences rising.
constexpr milliseconds fence_linger{60'000};

// auth_failed or tls_failed when nodes that failed so are enough on their own to sink the
// quorum: waiting would not mend them, so the operation says so at once.
error_code lasting_failure(fanout_result const& r)
{
   std::size_t lasting = 0;
   error_code first;
   for (auto const& n : r.nodes)
      if (n.reply.ec == error::auth_failed || n.reply.ec == error::tls_failed) {
         ++lasting;
         first = first ? first : n.reply.ec;
      }
   return lasting > r.nodes.size() - quorum_of(r.nodes.size()) ? first : error_code{};
}

// Why an acquire attempt was lost.
error_code lost_reason(fanout_result const& r)
{
   if (auto ec = lasting_failure(r))
      return ec;
   if (r.count(vote::no) > 0)
      return error::lock_taken;
   if (r.server_error())
      return error::unexpected_reply;
   return error::quorum_unreachable;
}

// Why a release or extend did not win its quorum. The key is blamed only when the nodes that
// found it gone or taken are enough on their own to sink the quorum: under RedLock a minority of
// such answers sits beside a valid lease (nodes restarted empty), and then it is the failures
// that lost the quorum, which a retry may mend.
error_code ownership_result(fanout_result const& r)
{
   if (r.decision == outcome::won)
      return {};
   auto const n = r.nodes.size();
   if (r.count(vote::no) > n - quorum_of(n)) {
      auto const other_owner = std::any_of(r.nodes.begin(), r.nodes.end(), [](node_result const& x) {
         return x.v == vote::no && x.own == ownership::not_owner;
      });
      return other_owner ? error::not_owner : error::lease_expired;
   }
   if (auto ec = lasting_failure(r))
      return ec;
   if (r.server_error())
      return error::unexpected_reply;
   return error::quorum_unreachable;
}

// The shortest time that a holder's key had left, among the nodes that said taken (-1: none).
milliseconds shortest_pttl(fanout_result const& r)
{
   auto best = milliseconds{-1};
   for (auto const& n : r.nodes)
      if (n.v == vote::no && n.acquire.pttl.count() >= 0 && (best.count() < 0 || n.acquire.pttl < best))
         best = n.acquire.pttl;
   return best;
}

// The latency of the slowest node that answered the attempt.
microseconds slowest_reply(fanout_result const& r)
{
   auto slowest = microseconds{0};
   for (auto const& n : r.nodes)
      if (n.v == vote::yes || n.v == vote::no)
         slowest = std::max(slowest, std::chrono::duration_cast<microseconds>(n.reply.latency));
   return slowest;
}

std::uint64_t highest_fence(fanout_result const& r)
{
   std::uint64_t f = 0;
   for (auto const& n : r.nodes)
      if (n.v == vote::yes)
         f = std::max(f, static_cast<std::uint64_t>(n.acquire.fence));
   return f;
}

// Copies the attempt's per-node results into the caller's report, if any.
void describe(fanout_result const& r, std::vector<std::shared_ptr<node>> const& nodes, report* diag)
{
   if (!diag)
      return;
   diag->attempts += 1;
   diag->nodes.resize(nodes.size());
   for (std::size_t i = 0; i < nodes.size(); ++i) {
      auto& d = diag->nodes[i];
      auto const& n = r.nodes[i];
      d.node = nodes[i]->name();
      d.vote = static_cast<node_vote>(n.v);
      d.latency = std::chrono::duration_cast<microseconds>(n.reply.latency);
      d.ec = n.reply.ec;
      d.message = n.reply.server_message;
   }
}

asio::awaitable<bool> cancelled()
{
   auto cs = co_await asio::this_coro::cancellation_state;
   co_return cs.cancelled() != asio::cancellation_type::none;
}

// Leaves the name's local slot when the acquisition ends without a lease.
struct slot_guard {
   client_core& core;
   std::string const& name;
   bool kept = false;
   ~slot_guard()
   {
      if (!kept)
         core.leave_slot(name);
   }
};

}  // namespace

asio::awaitable<error_code> client_core::sleep(microseconds d, std::string const* channel)
{
   if (stopped)
      co_return asio::error::operation_aborted;
   asio::steady_timer t{ex, d};
   if (channel)
      listener.add_sleeper(*channel, &t);
   // Ends at the delay, on a release event (the listener cancels the timer), or on cancellation.
   co_await t.async_wait(use_tuple);
   if (channel)
      listener.remove_sleeper(*channel, &t);
   co_return (co_await cancelled()) ? error_code{asio::error::operation_aborted} : error_code{};
}

std::shared_ptr<script_call const> client_core::acquire_call(
   std::string const& name,
   std::string const& token,
   milliseconds ttl) const
{
   return std::make_shared<script_call>(
      acquire_script(),
      std::vector<std::string>{lock_key(cfg.prefix, name), fence_key(cfg.prefix, name)},
      std::vector<std::string>{token, std::to_string(ttl.count()), std::to_string((ttl + fence_linger).count())});
}

lease client_core::grant(
   std::string const& name,
   std::string const& token,
   std::uint64_t fence,
   clock::time_point start,
   clock::time_point until,
   lock_options const& opts)
{
   auto st = std::make_shared<lease_state>(shared_from_this(), name, token, fence, start, until, opts);
   if (opts.renew)
      asio::co_spawn(
         ex, watch(weak_from_this(), st, std::min(opts.max_hold, forever), opts.loss_margin), asio::detached);
   else
      asio::co_spawn(ex, expire(st), asio::detached);
   return lease{std::move(st)};
}

asio::awaitable<client_core::lock_result> client_core::lock(std::string name, lock_options opts, bool try_only, report* diag)
{
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   work_guard in_flight{*work};  // a graceful close waits for this operation
   if (config_error)
      co_return lock_result{config_error, {}};
   if (auto ec = validate_options(name, opts, cfg.node_timeout))
      co_return lock_result{ec, {}};
   bool const no_wait = try_only || opts.wait.count() == 0;
   // A wait of a century is forever, and keeps the deadline from overflowing the clock.
   auto const wait = std::min<milliseconds>(opts.wait, forever);
   auto const deadline = clock::now() + (no_wait ? milliseconds{0} : wait);
   if (no_wait && slot_busy(name))
      co_return lock_result{error::lock_taken, {}};  // held or contended by this process
   auto const* spin = std::get_if<wait_strategy::spin>(&opts.strategy);
   // Only one coroutine per process and name contends in Redis; the others queue here. One that
   // a local unlock hands the name to tries at once: that release has been answered, and the
   // waiters of other processes learn of it at the same moment, from its message.
   if (auto ec = co_await enter_slot(name, deadline))
      co_return lock_result{ec, {}};
   slot_guard guard{*this, name};
   auto const channel = release_channel(cfg.prefix, name);
   auto const drift = opts.drift.value_or(default_drift(opts.ttl));
   for (;;) {
      if (stopped || co_await cancelled())
         co_return lock_result{asio::error::operation_aborted, {}};
      // A fresh token per attempt: a release of an earlier attempt that is late (NOSCRIPT, then
      // EVAL) can never remove what this one takes.
      auto const token = random_token();
      auto const seen = listener.events(channel);
      auto const t0 = clock::now();
      auto const call = acquire_call(name, token, opts.ttl);
      auto [ec, r] = co_await async_fanout(ex, nodes, call, cfg.node_timeout, use_tuple);
      describe(r, nodes, diag);
      if (ec) {
         release_where_taken(name, token, r, t0 + opts.ttl);  // cancelled: the SET may have landed anyway
         co_return lock_result{ec, {}};
      }
      error_code lost = lost_reason(r);
      if (r.decision == outcome::won) {
         if (auto until = valid_until(t0, clock::now(), opts.ttl, drift)) {
            guard.kept = true;
            co_return lock_result{error_code{}, grant(name, token, highest_fence(r), t0, *until, opts)};
         }
         lost = error::validity_expired;
      }
      // Nodes that said yes, failed or did not answer in time may hold the key: release it there.
      release_where_taken(name, token, r, t0 + opts.ttl);
      if (auto ec = co_await wait_to_retry(lost, r, name, channel, seen, spin, no_wait, deadline))
         co_return lock_result{ec, {}};
   }
}

asio::awaitable<error_code> client_core::wait_to_retry(
   error_code lost,
   fanout_result const& r,
   std::string const& name,
   std::string const& channel,
   std::uint64_t seen,
   wait_strategy::spin const* spin,
   bool no_wait,
   clock::time_point deadline)
{
   auto const now = clock::now();
   attempt_facts const f{
      .lost = lost,
      .no_wait = no_wait,
      .out_of_time = now >= deadline,
      .split_vote = r.count(vote::yes) > 0,
      .by_message = spin == nullptr,
      .subscription_confirmed = listener.confirmed(channel),
      .event_since_attempt = listener.events(channel) != seen,
   };
   auto const left = std::chrono::duration_cast<microseconds>(deadline - now);
   // (An if-chain, not a switch: GCC 12 miscompiles co_await inside switch cases.)
   auto const step = next_after(f);
   if (step == next_step::give_up)
      co_return final_error(f);
   if (step == next_step::retry_now)
      co_return error_code{};
   microseconds delay{};
   std::string const* wake_on = nullptr;
   if (step == next_step::draw_lots) {
      delay = lots_delay(slowest_reply(r), cfg.node_timeout, left, random);
   } else if (step == next_step::await_subscription) {
      auto& s = slots_.at(name);
      if (!s.subscribed) {
         listener.acquire(channel);
         s.subscribed = true;
      }
      // Woken by the confirmation; a server that never confirms (pub/sub refused) is polled.
      delay = std::min<microseconds>(probe_interval, left);
      wake_on = &channel;
   } else if (step == next_step::sleep_until_release) {
      delay = expiry_delay(shortest_pttl(r), probe_interval, left);
      wake_on = &channel;
   } else {
      delay = spin_delay(spin ? *spin : wait_strategy::spin{}, left, random);
   }
   co_return co_await sleep(delay, wake_on);
}

asio::awaitable<error_code> client_core::unlock(std::shared_ptr<lease_state> st, report* diag)
{
   using status = lease_state::status;
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   work_guard in_flight{*work};  // a graceful close waits for this operation
   if (!st || (st->st != status::held && st->st != status::lost))
      co_return error::not_held;
   // A lost lease was left in Redis so that nobody could enter before its holder stopped
   // working; now that the holder gives it back, release it where it is still ours.
   bool const was_lost = st->st == status::lost;
   st->end(status::released);
   st->st = status::released;  // end() leaves a lost lease as it is: mark it given back too
   // Owned until every node answered, or the key has expired by itself. (A named local: GCC 12
   // destroys a temporary with a destructor twice when it stands in a co_await expression.)
   auto keep = std::optional<persistence>{persistence{st->renewed_at + st->ttl, work}};
   auto const call = release_call(st->name, st->token);
   auto [ec, r] = co_await async_fanout(ex, nodes, call, cfg.node_timeout, use_tuple, std::move(keep));
   // Only now may the next local waiter try: sooner, it would race its own release.
   st->leave_slot();
   describe(r, nodes, diag);
   if (was_lost)
      co_return error::lease_lost;
   co_return ec ? ec : ownership_result(r);
}

asio::awaitable<error_code> client_core::extend(std::shared_ptr<lease_state> st, milliseconds ttl, report* diag)
{
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   work_guard in_flight{*work};  // a graceful close waits for this operation
   if (auto ec = validate_ttl(ttl))
      co_return ec;
   if (auto ec = validate_drift(ttl, st ? st->drift : std::nullopt))
      co_return ec;
   if (!st || st->st != lease_state::status::held)
      co_return error::not_held;
   if (stopped)
      co_return asio::error::operation_aborted;
   auto const t0 = clock::now();
   auto const call = std::make_shared<script_call>(
      extend_script(),
      std::vector<std::string>{lock_key(cfg.prefix, st->name), fence_key(cfg.prefix, st->name)},
      std::vector<std::string>{
         st->token, std::to_string(ttl.count()), std::to_string((ttl + fence_linger).count())});
   auto [ec, r] = co_await async_fanout(ex, nodes, call, cfg.node_timeout, use_tuple);
   describe(r, nodes, diag);
   if (ec)
      co_return ec;
   if (r.decision != outcome::won)
      co_return ownership_result(r);
   auto const now = clock::now();
   // A quorum that answers after the old validity ended cannot be trusted: others may have
   // taken the lock on nodes that restarted in between.
   if (now >= st->valid_until)
      co_return error::lease_expired;
   auto const until = valid_until(t0, now, ttl, st->drift.value_or(default_drift(ttl)));
   if (!until)
      co_return error::validity_expired;
   st->valid_until = *until;
   st->renewed_at = t0;
   st->ttl = ttl;
   co_return error_code{};
}

}  // namespace locksmith::detail
