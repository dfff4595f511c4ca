// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/release.hpp"

#include "protocol/kind_calls.hpp"
#include "protocol/verdicts.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>

namespace locksmith::detail {
namespace asio = boost::asio;

namespace {

// Completes an unlock's handler with `ec` on its own executor (else the client's), holding
// `keep_alive` until it runs: no wrapper of `h`, and one hop to that executor. `posted`: from
// inside the initiating call, so never at once; else from a completion on the client's
// executor, where the handler may run at once when its executor is this one: at once without
// asking `h` for it, `on_client` (runs_on).
void complete_unlock(client_context& ctx, asio::any_completion_handler<void(error_code)> h,
                     error_code ec, std::shared_ptr<void const> keep_alive, bool posted,
                     bool on_client)
{
   if (on_client && !posted)
      return std::move(h)(ec);
   if (on_client)
      return asio::post(ctx.ex, [h = std::move(h), ec, keep = std::move(keep_alive)]() mutable {
         std::move(h)(ec);
      });
   auto hex = asio::get_associated_executor(h, ctx.ex);
   auto f = asio::bind_executor(
      hex, [h = std::move(h), ec, keep = std::move(keep_alive)]() mutable { std::move(h)(ec); });
   if (posted)
      asio::post(ctx.ex, std::move(f));
   else
      asio::dispatch(std::move(f));
}

// A release in the background (release_on, release_later): nobody waits for its verdict, and the
// client owns it until `until`.
void send_owned(asio::any_io_executor const& ex, std::vector<std::shared_ptr<node>> const& targets,
                std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                std::chrono::steady_clock::time_point until, std::shared_ptr<owned_work> work)
{
   start_fanout(
      ex, targets, std::move(call), timeout, [](error_code, fanout_result) {},
      persistence{.until = until, .work = std::move(work)});
}

}  // namespace

std::vector<std::shared_ptr<node>> nodes_where(client_context const& ctx,
                                               std::vector<bool> const& where)
{
   std::vector<std::shared_ptr<node>> out;
   for (std::size_t i = 0; i < ctx.nodes.size() && i < where.size(); ++i)
      if (where[i])
         out.push_back(ctx.nodes[i]);
   return out;
}

void release_on(client_context& ctx, std::string const& name, std::string const& token,
                std::vector<bool> const& where, std::chrono::steady_clock::time_point until,
                lease_kind const& kind, bool quiet, waiter_entry const* rejoin)
{
   auto const targets = nodes_where(ctx, where);
   if (!targets.empty())
      send_owned(ctx.ex, targets,
                 release_call(kind, ctx.cfg.prefix, name, token, false, quiet, rejoin),
                 ctx.cfg.node_timeout, until, ctx.work);
}

std::function<void(std::size_t)> release_later(client_context const& ctx, std::string const& name,
                                               std::string const& token,
                                               std::chrono::steady_clock::time_point until,
                                               lease_kind const& kind, bool quiet,
                                               waiter_entry const* rejoin)
{
   return [ex = ctx.ex, nodes = ctx.nodes,
           call = release_call(kind, ctx.cfg.prefix, name, token, false, quiet, rejoin),
           timeout = ctx.cfg.node_timeout, work = ctx.work, until](std::size_t i) {
      if (!work->closed() && i < nodes.size())
         send_owned(ex, {nodes[i]}, call, timeout, until, work);
   };
}

void release_lease(client_context& ctx, std::shared_ptr<lease_state> st, report* diag, bool wakes,
                   asio::any_completion_handler<void(error_code)> h,
                   std::shared_ptr<void const> keep_alive, bool on_client)
{
   using status = lease_state::status;
   if (!st || (st->st != status::held && st->st != status::lost))
      return complete_unlock(ctx, std::move(h), error::not_held, std::move(keep_alive), true,
                             on_client);
   // A lost lease was left in Redis so that nobody could enter before its holder stopped
   // working; now that the holder gives it back, release it where it is still ours.
   bool const was_lost = st->st == status::lost;
   st->end(status::released);
   st->st = status::released;  // end() leaves a lost lease as it is: mark it given back too
   // Sent where the key may be, and owned there until each node answered, or the key has
   // expired by itself; elsewhere another owner held it when it was taken.
   // A slot move or a failover's election is waited out, up to then: it is routine, and the
   // release lands once it ends.
   // So is a plain node's restart, for restart_patience; and a key that a restart lost counts as
   // released while the lease is valid (key_runs: see persistence).
   auto const until = st->renewed_at + st->ttl;
   auto const now = std::chrono::steady_clock::now();
   persistence keep{.until = until,
                    .work = ctx.work,
                    .nodes = st->may_hold,
                    .only_there = true,
                    .wait_out_operations = true,
                    .restart_until = std::min(until, now + restart_patience(ctx.cfg.node_timeout)),
                    .key_runs =
                       now < st->valid_until ? std::move(st->key_runs) : std::vector<unsigned>{}};
   // The handed lease's token, where this one's takeover may have been lost with a failed-over
   // master (a key that holds it is this lease's, and nobody else's): released by the same call.
   auto const handed = std::exchange(st->took_over, {});
   auto call = release_call(st->kind, ctx.cfg.prefix, st->name, st->token, wakes, false, nullptr,
                            handed.empty() ? nullptr : &handed);
   auto slot = asio::get_associated_cancellation_slot(h);
   // A graceful close waits for this operation until it completes.
   start_fanout(
      ctx.ex, ctx.nodes, std::move(call), ctx.cfg.node_timeout,
      asio::bind_cancellation_slot(
         slot,
         [&ctx, st, diag, was_lost, in_flight = work_guard{ctx.work}, h = std::move(h),
          keep_alive = std::move(keep_alive), on_client](error_code ec, fanout_result r) mutable {
            // Only now may the next local waiter try: sooner, it would race its own
            // release.
            st->leave_slot();
            describe(r, ctx.nodes, diag);
            ctx.tel.votes("release", st->name, r, ctx.nodes);
            if (was_lost)
               ec = error::lease_lost;
            else if (!ec)
               ec = ownership_result(r);
            {
               auto const ended = std::move(in_flight);
            }
            // Never inside start_fanout's call (it completes from a reply or a post).
            complete_unlock(ctx, std::move(h), ec, std::move(keep_alive), false, on_client);
         }),
      std::move(keep));
}

void unlock_lease(client_context& ctx, local_queue& queue, std::shared_ptr<lease_state> st,
                  report* diag, asio::any_completion_handler<void(error_code)> h,
                  std::shared_ptr<void const> keep_alive, bool on_client)
{
   if (st && st->kind.what == lease_kind::of::lock && st->st == lease_state::status::held &&
       st->in_slot && !ctx.stopped && lease_state::clock::now() < st->valid_until &&
       queue.pass(st->name, {st->token, st->renewed_at + st->ttl})) {
      st->in_slot = false;  // the name went with the lease
      st->end(lease_state::status::released);
      return complete_unlock(ctx, std::move(h), {}, std::move(keep_alive), true, on_client);
   }
   bool const wakes = st && queue.subscribed(st->name);
   release_lease(ctx, std::move(st), diag, wakes, std::move(h), std::move(keep_alive), on_client);
}

}  // namespace locksmith::detail
