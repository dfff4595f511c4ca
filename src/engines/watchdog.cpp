// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/watchdog.hpp"

#include "protocol/calls.hpp"
#include "engines/extend.hpp"
#include "protocol/kind_calls.hpp"

#include "sansio/cluster.hpp"
#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"
#include "sansio/watchdog_schedule.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>

#include <algorithm>
#include <exception>
#include <iterator>
#include <optional>
#include <utility>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;
using status = lease_state::status;

namespace {

renewal_facts facts(lease_state const& st, milliseconds node_timeout)
{
   return renewal_facts{st.renewed_at, st.valid_until, st.cap,    st.ttl,
                        node_timeout,  st.loss_margin, st.failing};
}

// One batch's renewal in flight: each node's answer, until the last one is in.
struct renewal_round {
   std::vector<std::shared_ptr<lease_state>> batch;
   std::vector<node_reply> replies;
   std::size_t left;
   lease_state::clock::time_point t0;
   std::shared_ptr<owned_work> work;
};

}  // namespace

watchdog::watchdog(client_context& ctx)
    : ctx_{ctx}
    , timer_{ctx.ex}
{}

watchdog::~watchdog()
{
   stop();
}

void watchdog::keep(lease_state& st)
{
   auto const now = clock::now();
   schedule(st, st.renew ? next_wake(facts(st, ctx_.cfg.node_timeout), now) : st.valid_until);
   arm();
}

void watchdog::forget(lease_state& st) noexcept
{
   if (st.dog != this)
      return;
   queue_.erase(st.queued_at);
   st.dog = nullptr;
   // With nothing left to watch, the timer must not keep the io_context running (a program's
   // run() returns once its last lease is given back).
   if (queue_.empty() && armed_for_ != clock::time_point::max()) {
      timer_.cancel();
      armed_for_ = clock::time_point::max();
   }
}

void watchdog::stop() noexcept
{
   for (auto& [at, st] : queue_)
      st->dog = nullptr;
   queue_.clear();
   due_.clear();
   timer_.cancel();
   armed_for_ = clock::time_point::max();
}

void watchdog::schedule(lease_state& st, clock::time_point at)
{
   st.queued_at = queue_.emplace(at, &st);
   st.dog = this;
}

void watchdog::arm()
{
   // The timer is left as it is when it will fire no later than needed: a lease taken now is
   // due after those before it, so a steady stream of leases re-arms it once per wake, not once
   // per lease. (It may fire for a lease that has gone since: it then finds nothing due.)
   if (queue_.empty() || ctx_.stopped || queue_.begin()->first >= armed_for_)
      return;
   armed_for_ = queue_.begin()->first;
   timer_.expires_at(armed_for_);  // cancels the wait for a later time, if any
   timer_.async_wait([alive = std::weak_ptr<watchdog*>(alive_)](error_code ec) {
      auto self = alive.lock();
      if (!self || ec == asio::error::operation_aborted)
         return;  // gone, or re-armed for an earlier time: that wait is the live one
      (*self)->on_timer();
   });
}

void watchdog::on_timer()
{
   armed_for_ = clock::time_point::max();
   if (ctx_.stopped)
      return;
   auto const now = clock::now();
   auto const horizon = now + batch_window;
   std::vector<std::pair<clock::time_point, lease_state*>> later;
   while (!queue_.empty() && queue_.begin()->first <= horizon) {
      auto& st = *queue_.begin()->second;
      forget(st);
      if (!st.renew) {
         // Not renewed: the name is freed in this process once the lease expires.
         if (now >= st.valid_until)
            st.leave_slot();
         else
            later.emplace_back(st.valid_until, &st);
         continue;
      }
      clock::time_point wake;
      if (!due(st, now, wake)) {
         if (st.st == status::held)
            later.emplace_back(wake, &st);
         continue;
      }
      if (renewed_in_batches(st.kind))
         due_.push_back(st.shared_from_this());
      else
         renew_alone(st.shared_from_this());
   }
   for (auto const& [at, st] : later)
      schedule(*st, at);
   renew_next();
   arm();
}

bool watchdog::due(lease_state& st, clock::time_point now, clock::time_point& wake)
{
   auto const f = facts(st, ctx_.cfg.node_timeout);
   auto const step = on_wake(f, now);
   // A lost lease stays in Redis (unless it is gone already) until the holder, having stopped
   // its work, unlocks: released now, it would let the next holder in while that work may still
   // run.
   if (step == renewal_step::lose) {
      st.end(status::lost);
      return false;
   }
   if (step == renewal_step::sleep) {
      wake = loss_deadline(f);
      return false;
   }
   // The holder's own extension may have moved the renewal later.
   wake = next_wake(f, now);
   return st.failing || wake <= now + batch_window;
}

void watchdog::renew_next()
{
   // One renewal call at a time: a burst of leases due together (taken together) then goes out
   // in calls of up to max_batch, each sent when the last one is answered, instead of queueing
   // behind each other on the connections until the last ones time out.
   if (renewing_ || due_.empty() || ctx_.stopped)
      return;
   auto const now = clock::now();
   std::vector<std::shared_ptr<lease_state>> batch, other_slots;
   std::optional<std::uint16_t> slot;  // on a Redis Cluster, the batch's: one call, one slot
   std::size_t taken = 0;
   for (; taken < due_.size() && batch.size() < max_batch; ++taken) {
      auto& st = *due_[taken];
      if (st.st != status::held)
         continue;  // ended while it waited for its turn
      if (ctx_.one_slot_per_call) {
         auto const s = hash_slot(lock_key(ctx_.cfg.prefix, st.name));
         if (slot && *slot != s) {
            other_slots.push_back(std::move(due_[taken]));  // in a later call, in order
            continue;
         }
         slot = s;
      }
      // Waiting may have taken it past the last moment a renewal could start.
      clock::time_point wake;
      if (due(st, now, wake))
         batch.push_back(std::move(due_[taken]));
      else if (st.st == status::held)
         schedule(st, wake);
   }
   due_.erase(due_.begin(), due_.begin() + static_cast<long>(taken));
   due_.insert(due_.begin(), std::make_move_iterator(other_slots.begin()),
               std::make_move_iterator(other_slots.end()));
   if (!batch.empty())
      renew(std::move(batch));
}

void watchdog::renew(std::vector<std::shared_ptr<lease_state>> batch)
{
   std::vector<extension> leases;
   leases.reserve(batch.size());
   for (auto const& st : batch)
      leases.push_back({&st->name, &st->token, st->ttl});
   auto const call = extend_call(ctx_.cfg.prefix, leases);
   renewing_ = true;
   auto const n = ctx_.nodes.size();
   auto round = std::make_shared<renewal_round>(
      renewal_round{std::move(batch), std::vector<node_reply>(n), n, clock::now(), ctx_.work});
   // A graceful close waits for the renewal, as for any operation in flight.
   round->work->add();
   for (std::size_t i = 0; i < n; ++i) {
      // Every node's answer counts for every lease: the call waits for all of them (each within
      // its node timeout; a node found silent is refused at once), not for the first quorum.
      ctx_.nodes[i]->eval(
         call, ctx_.cfg.node_timeout, [] { return true; },
         [round, i, alive = std::weak_ptr<watchdog*>(alive_)](node_reply&& r) {
            round->replies[i] = std::move(r);
            if (--round->left > 0)
               return;
            if (auto self = alive.lock()) {
               (*self)->renewing_ = false;
               (*self)->settle(round->batch, round->replies, round->t0);
               (*self)->renew_next();
            }
            round->work->done();
         });
   }
}

void watchdog::settle(std::vector<std::shared_ptr<lease_state>> const& batch,
                      std::vector<node_reply> const& replies, clock::time_point t0)
{
   auto const n = replies.size();
   // Each node's answer, parsed once for the whole batch.
   std::vector<std::vector<ownership>> owned(n);
   std::vector<bool> answered(n);
   for (std::size_t j = 0; j < n; ++j) {
      auto const& r = replies[j];
      answered[j] = !r.ec && !parse_ownerships(r.resp, batch.size(), owned[j]);
      // A reply of the wrong shape: the connection is out of step with its replies.
      if (!r.ec && !answered[j] && !r.resp.has_error())
         ctx_.nodes[j]->reconnect();
   }
   fanout_result votes;
   votes.nodes.resize(n);
   for (std::size_t i = 0; i < batch.size(); ++i) {
      auto& st = *batch[i];
      if (st.st != status::held || ctx_.stopped)
         continue;  // ended while its renewal was in flight
      vote_counter count{n};
      for (std::size_t j = 0; j < n; ++j) {
         auto& v = votes.nodes[j];
         v = node_result{};
         if (answered[j]) {
            v.own = owned[j][i];
            v.v = v.own == ownership::done ? vote::yes : vote::no;
         } else {
            v.v = vote::failed;
            v.reply.ec = replies[j].ec;
            v.malformed = !replies[j].ec;  // a server error or a reply of another shape
         }
         count.record(v.v == vote::yes);
      }
      votes.decision = count.state();
      auto const before = st.valid_until;
      after_renewal(st, settle_extension(st, votes, t0, st.ttl), before);
   }
   arm();
}

void watchdog::renew_alone(std::shared_ptr<lease_state> st)
{
   // The renewal keeps the client's parts alive until it ends (it uses ctx_), and a graceful
   // close waits for it, as for a batch.
   auto core = st->core.lock();
   if (!core)
      return;
   auto const before = st->valid_until;
   auto work = ctx_.work;
   work->add();
   auto renewal = extend_lease(ctx_, st, st->ttl, nullptr);
   asio::co_spawn(ctx_.ex, std::move(renewal),
                  [st, before, core, work,
                   alive = std::weak_ptr<watchdog*>(alive_)](std::exception_ptr e, error_code ec) {
                     auto self = alive.lock();
                     if (self && !e) {
                        (*self)->after_renewal(*st, ec, before);
                        (*self)->arm();
                     }
                     work->done();
                  });
}

void watchdog::after_renewal(lease_state& st, error_code ec, clock::time_point before)
{
   if (st.st != status::held || ctx_.stopped)
      return;  // ended while its renewal was in flight
   ctx_.tel.renewal(st, ec, before);
   if (ec == error::not_owner || ec == error::lease_expired) {
      st.end(status::lost);  // the key is gone or someone else's: no retry can help
      return;
   }
   st.failing = static_cast<bool>(ec);
   schedule(st, next_wake(facts(st, ctx_.cfg.node_timeout), clock::now()));
}

}  // namespace locksmith::detail
