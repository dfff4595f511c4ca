// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/acquire_engine.hpp"

#include "protocol/calls.hpp"
#include "protocol/kind_calls.hpp"
#include "engines/release.hpp"
#include "engines/spawn.hpp"
#include "protocol/verdicts.hpp"

#include "sansio/backoff.hpp"
#include "sansio/keys.hpp"
#include "sansio/retry.hpp"
#include "sansio/token.hpp"
#include "sansio/validity.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <utility>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// A waiter that cannot reach a quorum, or whose lock has no TTL, looks again this often.
constexpr milliseconds probe_interval{100};

// How long past a node timeout a waiter that leaves keeps sending its leave to a node that did
// not answer; after that, its registration expires by itself (acquire.lua).
constexpr milliseconds leave_for{1000};

asio::awaitable<bool> cancelled()
{
   auto cs = co_await asio::this_coro::cancellation_state;
   co_return cs.cancelled() != asio::cancellation_type::none;
}

}  // namespace

acquire_engine::acquire_engine(client_context& ctx, local_queue& queue, release_listener& listener)
    : ctx_{ctx}
    , queue_{queue}
    , listener_{listener}
    , random_{std::random_device{}()}
{}

namespace {

bool is_fair(lease_kind const& kind) noexcept
{
   return kind.what == lease_kind::of::fair;
}

// How long what a try sent may live: its key, or a fair waiter's entry (or key handed to it).
milliseconds lives(lock_options const& opts, lease_kind const& kind)
{
   return is_fair(kind) ? std::max(opts.ttl, fair_entry_ttl) : opts.ttl;
}

}  // namespace

void acquire_engine::owed_calls::on_late(std::size_t node, vote v)
{
   if (judged_)
      settle(node, v);
   else
      before_.emplace_back(node, v);
}

void acquire_engine::owed_calls::waive()
{
   judged_ = true;
   before_.clear();
}

void acquire_engine::owed_calls::arm(std::vector<std::size_t> unanswered, rule owes,
                                     std::function<void(std::size_t)> call)
{
   if (judged_)
      return;
   judged_ = true;
   unanswered_ = std::move(unanswered);
   owes_ = owes;
   call_ = std::move(call);
   for (auto const& [node, v] : std::exchange(before_, {}))
      settle(node, v);
}

void acquire_engine::owed_calls::settle(std::size_t node, vote v)
{
   auto const it = std::find(unanswered_.begin(), unanswered_.end(), node);
   if (it == unanswered_.end())
      return;  // flushed already, or nothing owed
   unanswered_.erase(it);
   if (owes_(v))
      call_(node);
}

void acquire_engine::owed_calls::flush()
{
   if (!call_)
      return;  // not judged yet (its votes wait), or nothing owed
   for (auto const node : std::exchange(unanswered_, {}))
      call_(node);
}

void acquire_engine::settle_owed(attempt& a)
{
   if (a.owed)
      std::exchange(a.owed, nullptr)->flush();
}

late_vote_handler acquire_engine::late_votes(attempt const& a)
{
   if (!a.owed)
      return {};
   return [owed = a.owed](std::size_t node, vote v) { owed->on_late(node, v); };
}

std::shared_ptr<script_call const> acquire_engine::begin(attempt& a, std::string const& name,
                                                         std::string const& channel,
                                                         lock_options const& opts,
                                                         lease_kind const& kind,
                                                         local_queue::handover const* handed)
{
   // A fresh token per attempt (a fair lock's: per attempt that may have taken a key, see
   // acquire): a release of an earlier attempt that is late (NOSCRIPT, then EVAL) can never
   // remove what this one takes.
   if (a.token.empty()) {
      a.token = random_token();
      add_owner(a.token, opts.owner.view());  // inside the stored value: no argument, no key
      if (is_fair(kind))
         listener_.await_handoff(a.token);
   }
   a.seen = listener_.events(channel);
   a.t0 = clock::now();
   auto const entry = registration(a, channel, opts, kind);
   // The last try's calls to its unanswered nodes go first, as a release sent at once would.
   settle_owed(a);
   a.owed = ctx_.nodes.size() > 1 ? std::make_shared<owed_calls>() : nullptr;
   // Without a fence, the plain SET NX; a handover or a registration needs the script, which
   // then mints no fence.
   if (!opts.fence && kind.what == lease_kind::of::lock && !handed && !entry)
      return unfenced_acquire_call(ctx_.cfg.prefix, name, a.token, opts.ttl);
   return acquire_call(kind, ctx_.cfg.prefix, name, a.token, opts.ttl, ctx_.nodes.size(),
                       handed ? &handed->token : nullptr, entry ? &*entry : nullptr, opts.fence);
}

std::optional<waiter_entry> acquire_engine::registration(attempt& a, std::string const& channel,
                                                         lock_options const& opts,
                                                         lease_kind const& kind)
{
   // Only a plain lock's waiter that a message wakes: a spinning one looks by itself, and a
   // waiter that is not subscribed yet would miss the message naming it (it registers with the
   // try that follows the confirmation). A channel that still lingers subscribed will do: a
   // waiter takes it again as soon as its try lost (wait_to_retry).
   bool const by_message = std::holds_alternative<wait_strategy::subscribe_t>(opts.strategy);
   if (kind.what != lease_kind::of::lock || !by_message || !a.wait_until || *a.wait_until <= a.t0 ||
       !listener_.subscribed(channel))
      return std::nullopt;
   // Tagged with this process's channel, to which a release that names it publishes. Without a
   // tag (a listener made so) the id ends in ':', which release.lua reads as no tag at all.
   if (a.waiter.empty()) {
      a.waiter = waiter_id(std::chrono::system_clock::now(), listener_.tag(), random_token());
      listener_.await_handoff(a.waiter);
   }
   bool const before = a.registered;
   a.registered = true;
   auto const life = std::chrono::ceil<milliseconds>(*a.wait_until - a.t0);
   return waiter_entry{&a.waiter, life, before};
}

acquire_engine::clock::time_point acquire_engine::leave_deadline() const
{
   return clock::now() + ctx_.cfg.node_timeout + leave_for;
}

void acquire_engine::leave(std::string const& name, attempt& a, std::vector<bool> const* where)
{
   if (a.waiter.empty())
      return;
   listener_.forget_handoff(a.waiter);
   // The release script takes a waiter's id out of the waiters (it never holds the key).
   if (a.registered)
      release_on(ctx_, name, a.waiter, where ? *where : std::vector<bool>(ctx_.nodes.size(), true),
                 leave_deadline());
   a.waiter.clear();
   a.registered = false;
}

std::optional<acquire_engine::result> acquire_engine::judge(attempt& a, std::string const& name,
                                                            lock_options const& opts, report* diag,
                                                            lease_kind const& kind)
{
   describe(a.r, ctx_.nodes, diag);
   if (a.ec) {
      give_up(name, a, a.r, a.t0 + lives(opts, kind), kind);  // the SET may have landed
      // The call ends: the next contender for the name, in another call, must find the nodes
      // that had not answered released first, as the release sent now lands there.
      settle_owed(a);
      leave(name, a);
      return result{a.ec, {}};
   }
   ctx_.tel.votes("acquire", name, a.r, ctx_.nodes);
   a.lost = lost_reason(a.r);
   if (a.r.decision == outcome::won) {
      auto const drift = opts.drift.value_or(default_drift(opts.ttl));
      if (auto until = valid_until(a.t0, clock::now(), opts.ttl, drift)) {
         listener_.forget_handoff(a.token);
         // The winning try took the waiter out where it won (acquire.lua; where it was never
         // registered, it did not need to): it leaves where the try lost or failed, and where
         // it had not answered yet, once it has and if it lost or failed there (owed_calls).
         std::vector<bool> lost_there(ctx_.nodes.size(), false);
         for (std::size_t i = 0; i < lost_there.size() && i < a.r.nodes.size(); ++i)
            lost_there[i] = a.r.nodes[i].v == vote::no || a.r.nodes[i].v == vote::failed;
         bool const may_owe = a.owed && a.registered && !a.waiter.empty();
         if (auto unanswered = may_owe ? unanswered_nodes(a.r) : std::vector<std::size_t>{};
             !unanswered.empty())
            a.owed->arm(
               std::move(unanswered), [](vote v) { return v != vote::yes; },
               release_later(ctx_, name, a.waiter, leave_deadline()));
         else if (a.owed)
            a.owed->waive();
         a.owed.reset();
         leave(name, a, &lost_there);  // (nothing is sent where it lost nowhere)
         // A fair waiter's token was queued on every node, and any may have handed it the key.
         auto where = is_fair(kind) ? std::vector<bool>(ctx_.nodes.size(), true)
                                    : may_hold_key(a.r, ctx_.nodes.size());
         // Kept only where some node's run is known (none is without a quarantine).
         std::vector<unsigned> runs;
         for (std::size_t i = 0; i < a.r.nodes.size(); ++i)
            if (a.r.nodes[i].run != node::unknown_run) {
               runs.resize(a.r.nodes.size(), node::unknown_run);
               runs[i] = a.r.nodes[i].run;
            }
         result r{error_code{}, won{std::move(a.token),
                                    highest_fence(a.r),
                                    a.t0,
                                    *until,
                                    std::move(where),
                                    std::move(runs),
                                    {}}};
         a.token.clear();  // the lease's now
         return r;
      }
      a.lost = error::validity_expired;
   }
   return std::nullopt;
}

void acquire_engine::give_up(std::string const& name, attempt& a, fanout_result const& r,
                             clock::time_point until, lease_kind const& kind, bool quiet)
{
   auto& token = a.token;
   // A fair waiter's token is queued on every node, and any may hand it the key meanwhile.
   if (is_fair(kind)) {
      release_on(ctx_, name, token, std::vector<bool>(ctx_.nodes.size(), true), until, kind);
   } else {
      // A registered waiter registers where its try took the key, as acquire.lua registers a
      // lost try: until the key it lost to is due to expire (here: its own, `until`) and a second
      // more, and never past its wait.
      std::optional<waiter_entry> rejoin;
      if (quiet && a.registered && a.wait_until) {
         auto const now = clock::now();
         rejoin = waiter_entry{&a.waiter,
                               std::chrono::ceil<milliseconds>(std::min(
                                  *a.wait_until - now, until - now + std::chrono::seconds{1})),
                               true};
      }
      // The nodes that may hold the key (may_hold_key); where the try had not answered when it
      // was decided, only once it has, and if it took the key there or failed (owed_calls).
      auto where = may_hold_key(r, ctx_.nodes.size());
      auto* const joins = rejoin ? &*rejoin : nullptr;
      if (auto unanswered = unanswered_nodes(r); a.owed && !unanswered.empty()) {
         for (auto const i : unanswered)
            where[i] = false;
         a.owed->arm(
            std::move(unanswered), [](vote v) { return v != vote::no; },
            release_later(ctx_, name, token, until, kind, quiet, joins));
      }
      release_on(ctx_, name, token, where, until, kind, quiet, joins);
   }
   listener_.forget_handoff(token);
   token.clear();
}

asio::awaitable<acquire_engine::result>
acquire_engine::acquire(std::string const& name, lock_options const& opts, bool no_wait,
                        clock::time_point deadline, report* diag, lease_kind const& kind,
                        local_queue::handover const* handed, attempt* first)
{
   auto const channel = release_channel(ctx_.cfg.prefix, name);
   // The handed lease's key, where the first try did not take it over (`taken`: by node), is
   // released: it must not outlive the handover for its TTL.
   auto let_go = [&](fanout_result const* taken) {
      std::vector<bool> where(ctx_.nodes.size(), true);
      for (std::size_t i = 0; taken && i < where.size(); ++i)
         where[i] = taken->nodes[i].v != vote::yes && taken->nodes[i].v != vote::no;
      release_on(ctx_, name, handed->token, where, handed->until);
      handed = nullptr;
   };
   // Only the lock's acquire script takes a handed key over: another kind gives it back first.
   if (handed && kind.what != lease_kind::of::lock)
      let_go(nullptr);
   // A fair lock keeps its place in the queues: one token for all its tries (see below), woken
   // only by a release that hands the key to that token, and never by spinning.
   bool const fair = is_fair(kind);
   attempt a{};
   if (first)
      a = std::move(*first);
   if (!no_wait)
      a.wait_until = deadline;
   // At every way out, a throw included (a cancellation throws at the next co_await, Asio's
   // default, which the loop's own checks come after), the waiter leaves the waiters, and a token
   // not given back yet (a fair waiter's, queued on every node) is.
   struct leave_at_exit {
      acquire_engine& e;
      std::string const& name;
      attempt& a;
      milliseconds lives;
      lease_kind const& kind;
      ~leave_at_exit()
      {
         try {
            if (!a.token.empty())
               e.give_up(name, a, fanout_result{}, clock::now() + lives, kind);
            settle_owed(a);  // as above: the next contender is another call
            e.leave(name, a);
         } catch (...) {  // out of memory: the entries expire by themselves
         }
      }
   } const leaving{*this, name, a, lives(opts, kind), kind};
   auto const* spin = fair ? nullptr : std::get_if<wait_strategy::spin>(&opts.strategy);
   // Tries after the call's first that lose are waiters woken in vain (metrics' retries_lost).
   bool retrying = false;
   for (bool judged = first != nullptr;; judged = false, retrying = true) {
      if (!judged) {
         if (ctx_.stopped || co_await cancelled()) {
            if (handed)
               let_go(nullptr);
            co_return result{asio::error::operation_aborted, {}};  // `leaving` gives the token up
         }
         auto const call = begin(a, name, channel, opts, kind, handed);
         auto [ec, r] = co_await async_fanout(ctx_.ex, ctx_.nodes, call, ctx_.cfg.node_timeout,
                                              use_tuple, std::nullopt, late_votes(a));
         a.ec = ec;
         a.r = std::move(r);
         // A node that said yes holds the new token, one that said no holds another owner's:
         // only those that failed or did not answer may still hold the handed one.
         std::string took_over = handed ? handed->token : std::string{};
         if (handed)
            let_go(ec ? nullptr : &a.r);
         if (auto done = judge(a, name, opts, diag, kind)) {
            done->lease.took_over = std::move(took_over);  // released with the lease
            co_return std::move(*done);
         }
         if (retrying)
            ctx_.tel.retry_lost();
      }
      // Nodes that said yes, failed or did not answer in time may hold the key: release it there.
      // A fair waiter that no node said yes to holds nothing, and stays in the queues as it is;
      // one that some did (a split vote, or a won attempt too late) steps back where it may hold
      // the key and keeps its place; if that fails anywhere, it gives all of it back and queues
      // again, with a new token. So does a split among waiters alone: heads of different
      // queues that kept their places would wait for each other's handoff forever; giving them
      // up, they draw lots and queue again.
      bool kept = false;
      bool const yes = a.r.count(vote::yes) > 0;
      if (fair && yes && !split_among_waiters(a.r))
         kept = co_await step_back(name, a.token, a.r);
      retry_context const next{name, channel, a.seen, spin, no_wait, deadline, kept};
      auto const facts = facts_after(a.lost, a.r, next);
      auto const step = next_after(facts);
      if (!kept && (!fair || yes))
         give_up(name, a, a.r, a.t0 + lives(opts, kind), kind, releases_quietly(facts, step));
      auto const waited = co_await wait_to_retry(facts, step, a.r, next);
      if (waited) {
         if (!a.token.empty())
            give_up(name, a, a.r, clock::now() + lives(opts, kind), kind);
         co_return result{waited, {}};
      }
   }
}

asio::awaitable<bool> acquire_engine::step_back(std::string const& name, std::string const& token,
                                                fanout_result const& r)
{
   auto const targets = nodes_where(ctx_, may_hold_key(r, ctx_.nodes.size()));
   auto const call = fair_requeue_call(ctx_.cfg.prefix, name, token, targets.size());
   auto [ec, back] =
      co_await async_fanout(ctx_.ex, targets, call, ctx_.cfg.node_timeout, use_tuple);
   co_return !ec && back.decision == outcome::won;
}

attempt_facts acquire_engine::facts_after(error_code lost, fanout_result const& r,
                                          retry_context const& c)
{
   // A waiter woken by messages takes the name's channel at once: one that still lingers
   // subscribed is confirmed then, and the waiter sleeps registered with no second try. The
   // name's contenders hold this one reference until the name is forgotten.
   if (c.spin == nullptr && !c.no_wait && queue_.mark_subscribed(c.name))
      listener_.acquire(c.channel);
   return attempt_facts{
      .lost = lost,
      .no_wait = c.no_wait,
      .out_of_time = clock::now() >= c.deadline,
      .split_vote = r.count(vote::yes) > 0 && !c.kept_place,
      .by_message = c.spin == nullptr,
      .subscription_confirmed = listener_.confirmed(c.channel),
      .event_since_attempt = listener_.events(c.channel) != c.seen,
      .others_hold_quorum = r.quorum > 0 && r.count(vote::no) >= r.quorum,
   };
}

asio::awaitable<error_code> acquire_engine::wait_to_retry(attempt_facts const& f, next_step step,
                                                          fanout_result const& r,
                                                          retry_context const& c)
{
   auto const left = std::max(microseconds{0},
                              std::chrono::duration_cast<microseconds>(c.deadline - clock::now()));
   // (An if-chain, not a switch: GCC 12 miscompiles co_await inside switch cases.)
   if (step == next_step::give_up)
      co_return final_error(f);
   if (step == next_step::retry_now) {
      ctx_.tel.woke(step, true);
      co_return error_code{};
   }
   microseconds delay{};
   std::string const* wake_on = nullptr;
   if (step == next_step::draw_lots) {
      delay = lots_delay(slowest_reply(r), ctx_.cfg.node_timeout, left, random_);
   } else if (step == next_step::await_subscription) {
      // The channel was taken above. Woken by the confirmation; a server that never confirms
      // (pub/sub refused) is polled.
      delay = std::min<microseconds>(probe_interval, left);
      wake_on = &c.channel;
   } else if (step == next_step::sleep_until_release) {
      delay = expiry_delay(shortest_pttl(r), probe_interval, left);
      wake_on = &c.channel;
   } else {
      delay = spin_delay(c.spin ? *c.spin : wait_strategy::spin{}, left, random_);
   }
   auto const events = listener_.events(c.channel);
   auto const ec = co_await sleep(delay, wake_on);
   if (!ec)
      ctx_.tel.woke(step, listener_.events(c.channel) != events);
   co_return ec;
}

asio::awaitable<error_code> acquire_engine::sleep(microseconds d, std::string const* channel)
{
   if (ctx_.stopped)
      co_return asio::error::operation_aborted;
   asio::steady_timer t{ctx_.ex, d};
   if (channel)
      listener_.add_sleeper(*channel, &t);
   // Ends at the delay, on a release event (the listener cancels the timer), or on cancellation.
   co_await t.async_wait(use_tuple);
   if (channel)
      listener_.remove_sleeper(*channel, &t);
   co_return (co_await cancelled()) ? error_code{asio::error::operation_aborted} : error_code{};
}

}  // namespace locksmith::detail
