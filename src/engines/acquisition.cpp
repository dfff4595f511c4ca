// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/acquisition.hpp"

#include "engines/spawn.hpp"

#include "sansio/keys.hpp"
#include "sansio/validate.hpp"
#include "sansio/validity.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>

#include <optional>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// Leaves the name's local slot when the acquisition ends without a lease.
struct slot_guard {
   lease_owner& owner;
   std::string const& name;
   bool kept = false;
   ~slot_guard()
   {
      if (!kept)
         owner.leave_slot(name);
   }
};

// Completes a lock's handler with its coroutine's outcome (spawn), holding the owner until then.
struct complete_lock {
   std::shared_ptr<lease_owner> owner;
   void operator()(acquisition::lock_handler h, std::exception_ptr e,
                   acquisition::lock_result r) const
   {
      if (e)
         return std::move(h)(code_of(e), lease{});
      std::move(h)(r.ec, std::move(r.held));
   }
};

}  // namespace

acquisition::acquisition(client_context& ctx, local_queue& queue, release_listener& listener,
                         watchdog& dog, lease_owner& owner)
    : ctx_{ctx}
    , queue_{queue}
    , dog_{dog}
    , owner_{owner}
    , acquire_{ctx, queue, listener}
{}

lease acquisition::grant(std::string const& name, acquire_engine::won w, lock_options const& opts,
                         lease_kind const& kind)
{
   // Unfenced, a script's try (a handover's, a registered waiter's) mints none: the lease has none.
   auto st = std::make_shared<lease_state>(owner_.shared_from_this(), name, std::move(w.token),
                                           opts.fence ? w.fence : 0, w.start, w.valid_until, opts);
   st->may_hold = std::move(w.may_hold);
   st->key_runs = std::move(w.key_runs);
   st->took_over = std::move(w.took_over);
   st->kind = kind;
   if (kind.shared())
      st->leave_slot();  // others may hold it with us: the next local contender goes on
   st->renew = opts.renew;
   st->loss_margin = opts.loss_margin;
   if (opts.max_hold)
      st->cap = deadline_after(st->renewed_at, *opts.max_hold);
   dog_.keep(*st);
   return lease{std::move(st)};
}

error_code acquisition::refusal(std::string const& name, lock_options const& opts,
                                lease_kind const& kind) const
{
   if (ctx_.config_error)
      return ctx_.config_error;
   if (auto ec = validate_options(name, opts, ctx_.cfg.node_timeout))
      return ec;
   // Nobody could enter; or no owner; or a fair lease of a kind that has no queue; or no fence
   // where the kind's scripts always mint one (lock_options::fence).
   if (kind.permits == 0 || (kind.what == lease_kind::of::reentrant && kind.owner.empty()) ||
       opts.fair != (kind.what == lease_kind::of::fair) ||
       (!opts.fence && kind.what != lease_kind::of::lock))
      return error::invalid_argument;
   return {};
}

// A plain lock's acquisition while its first try, sent without a coroutine, is out.
struct acquisition::first_try {
   std::string name;
   lock_options opts;
   bool try_only;
   report* diag;
   clock::time_point start;
   lock_handler h;
   bool on_client;        // h runs on the client's executor (runs_on)
   work_guard in_flight;  // a graceful close waits for this operation
   acquire_engine::attempt a{};
   // The handler's slot is ours while the try is out: a cancellation is remembered, even one
   // that comes after the fan-out completed and before its completion runs, and passed on.
   bool cancelled = false;
   asio::cancellation_signal to_fanout;
   asio::cancellation_slot callers;  // the handler's slot while ours holds it, else unconnected

   // Also when the fan-out's completion is destroyed unrun (its io_context went away): the
   // slot's handler points here, and a later emit would reach freed memory.
   ~first_try() { give_back_slot(); }

   void give_back_slot() noexcept
   {
      if (callers.is_connected())
         callers.clear();
      callers = {};
   }
};

void acquisition::lock(std::string name, lock_options opts, bool try_only, report* diag,
                       lease_kind kind, lock_handler h, bool on_client)
{
   auto const start = clock::now();
   // The common case, a plain lock that no coroutine of this process contends for, costs no
   // coroutine unless its first try loses: no frames, no posted completion.
   bool const quick = kind.what == lease_kind::of::lock && !ctx_.stopped &&
                      !refusal(name, opts, kind) && queue_.try_enter(name);
   if (!quick) {
      auto body = timed_take(std::move(name), std::move(opts), try_only, diag, std::move(kind),
                             start, nullptr);
      return spawn(ctx_.ex, std::move(body), std::move(h),
                   complete_lock{owner_.shared_from_this()});
   }
   // Built in place: its cancellation_signal neither copies nor moves.
   std::unique_ptr<first_try> op{new first_try{.name = std::move(name),
                                               .opts = std::move(opts),
                                               .try_only = try_only,
                                               .diag = diag,
                                               .start = start,
                                               .h = std::move(h),
                                               .on_client = on_client,
                                               .in_flight = work_guard{ctx_.work},
                                               .a = {},
                                               .cancelled = false,
                                               .to_fanout = {},
                                               .callers = {}}};
   if (!try_only && op->opts.wait.count() > 0)
      op->a.wait_until = deadline_after(start, op->opts.wait);
   auto call =
      acquire_.begin(op->a, op->name, release_channel(ctx_.cfg.prefix, op->name), op->opts, kind);
   if (auto slot = asio::get_associated_cancellation_slot(op->h); slot.is_connected()) {
      slot.assign([o = op.get()](asio::cancellation_type type) {
         o->cancelled = true;
         o->to_fanout.emit(type);
      });
      op->callers = slot;
   }
   auto to_fanout = op->to_fanout.slot();
   auto late = acquire_engine::late_votes(op->a);
   // `self` holds the owner, and with it this engine, until the try is back.
   start_fanout(ctx_.ex, ctx_.nodes, std::move(call), ctx_.cfg.node_timeout,
                fanout_handler{asio::bind_cancellation_slot(
                   to_fanout,
                   [self = owner_.shared_from_this(), this,
                    op = std::move(op)](error_code ec, fanout_result r) mutable {
                      // Cancelled: what the try took is released, as for a failed one.
                      op->a.ec = op->cancelled ? asio::error::operation_aborted : ec;
                      op->a.r = std::move(r);
                      after_first_try(std::move(op));
                   })},
                std::nullopt, std::move(late));
}

void acquisition::after_first_try(std::unique_ptr<first_try> op)
{
   // The slot goes back to the handler (and to the coroutine, if the acquisition goes on).
   op->give_back_slot();
   lease_kind const kind{lease_kind::of::lock};
   auto done = acquire_.judge(op->a, op->name, op->opts, op->diag, kind);
   if (!done) {
      // Lost: the acquisition goes on as a coroutine, which holds the slot and the work count
      // from now on, and decides how to wait for the next try.
      auto first = std::make_shared<acquire_engine::attempt>(std::move(op->a));
      auto body = timed_take(std::move(op->name), std::move(op->opts), op->try_only, op->diag, kind,
                             op->start, std::move(first));
      auto h = std::move(op->h);
      op.reset();
      return spawn(ctx_.ex, std::move(body), std::move(h),
                   complete_lock{owner_.shared_from_this()});
   }
   lock_result r{done->ec, {}};
   if (r.ec)
      owner_.leave_slot(op->name);
   else
      r.held = grant(op->name, std::move(done->lease), op->opts, kind);
   auto h = std::move(op->h);
   auto const start = op->start;
   bool const on_client = op->on_client;
   op.reset();  // the work count ends before the completion, as a coroutine's would
   finish_lock(std::move(h), start, std::move(r), on_client);
}

void acquisition::finish_lock(lock_handler h, clock::time_point start, lock_result r,
                              bool on_client)
{
   ctx_.tel.lock_done(r.ec, clock::now() - start);
   // Never inside lock(): this runs from a fan-out's completion, on the client's executor, where
   // a handler whose executor that is runs at once (as a dispatch there would).
   if (on_client)
      return std::move(h)(r.ec, std::move(r.held));
   auto hex = asio::get_associated_executor(h, ctx_.ex);
   asio::dispatch(hex, asio::append(std::move(h), r.ec, std::move(r.held)));
}

asio::awaitable<acquisition::lock_result>
acquisition::timed_take(std::string name, lock_options opts, bool try_only, report* diag,
                        lease_kind kind, clock::time_point start,
                        std::shared_ptr<acquire_engine::attempt> first)
{
   // `first` moved, not copied: GCC 12 may destroy an argument of a co_await expression twice,
   // which only a moved-from one survives.
   auto r = co_await take(std::move(name), std::move(opts), try_only, diag, kind, std::move(first));
   ctx_.tel.lock_done(r.ec, clock::now() - start);
   co_return r;
}

asio::awaitable<acquisition::lock_result>
acquisition::take(std::string name, lock_options opts, bool try_only, report* diag,
                  lease_kind const& kind, std::shared_ptr<acquire_engine::attempt> first)
{
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   work_guard in_flight{ctx_.work};  // a graceful close waits for this operation
   bool const no_wait = try_only || opts.wait.count() == 0;
   auto const deadline =
      deadline_after(first ? first->t0 : clock::now(), no_wait ? milliseconds{0} : opts.wait);
   // The owner's next hold does not queue behind this process's other contenders for the name:
   // they wait for the owner, which would then wait for them.
   bool const reentry =
      kind.what == lease_kind::of::reentrant && reentrant_.held_by(name, kind.owner);
   std::optional<local_queue::handover> handed;
   if (!first) {
      if (auto ec = refusal(name, opts, kind))
         co_return lock_result{ec, {}};
   }
   if (!reentry && !first) {
      if (no_wait && queue_.busy(name))
         co_return lock_result{error::lock_taken, {}};  // held or contended by this process
      // Only one coroutine per process and name contends in Redis; the others queue here. One
      // that a local unlock hands the name to tries at once: that release has been answered, and
      // the waiters of other processes learn of it at the same moment, from its message. One
      // that is handed the lease itself (only a plain lock's, see unlock) takes its key over in
      // one round trip.
      if (auto ec = co_await queue_.enter(name, deadline, handed))
         co_return lock_result{ec, {}};
   }
   slot_guard guard{owner_, name, reentry};
   auto const* takes_over = handed ? &*handed : nullptr;
   auto [ec, won] =
      co_await acquire_.acquire(name, opts, no_wait, deadline, diag, kind, takes_over, first.get());
   if (ec)
      co_return lock_result{ec, {}};
   guard.kept = true;
   auto held = grant(name, std::move(won), opts, kind);
   if (reentry)
      held.state()->in_slot = false;  // the first hold has the name's place, not this one
   if (kind.what == lease_kind::of::reentrant)
      reentrant_.add(name, held.state());
   co_return lock_result{error_code{}, std::move(held)};
}

}  // namespace locksmith::detail
