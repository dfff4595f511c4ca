// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "core/client_core.hpp"

#include "transport/nodes.hpp"
#include "engines/extend.hpp"
#include "transport/log.hpp"
#include "engines/release.hpp"
#include "engines/spawn.hpp"

#include "sansio/keys.hpp"
#include "sansio/token.hpp"
#include "sansio/url.hpp"
#include "sansio/validate.hpp"

#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;

client_core::client_core(asio::any_io_executor e, config c)
    : ctx_{.ex = std::move(e), .cfg = std::move(c), .config_error = {}, .nodes = {}}
    , listener_{ctx_.ex, ctx_.cfg.nodes.size(), listener_links(), random_tag(),
                ctx_.cfg.subscription_linger}
    , queue_{ctx_.ex}
    , dog_{ctx_}
    , acquisition_{ctx_, queue_, listener_, dog_, *this}
{
   ctx_.config_error = validate_config(ctx_.cfg);
   ctx_.one_slot_per_call = std::any_of(ctx_.cfg.nodes.begin(), ctx_.cfg.nodes.end(), [](auto& u) {
      auto const url = parse_url(u);
      return url && url->cluster();
   });
   logger_ = share_logger(ctx_.cfg);  // before the nodes copy the config
   ctx_.tel.configure(ctx_.cfg);
}

client_core::client_core(asio::any_io_executor e, config c,
                         std::vector<std::shared_ptr<node>> given)
    : ctx_{.ex = std::move(e), .cfg = std::move(c), .config_error = {}, .nodes = std::move(given)}
    , listener_{ctx_.ex, ctx_.nodes.size(), listener_links(), random_tag(),
                ctx_.cfg.subscription_linger}
    , queue_{ctx_.ex}
    , dog_{ctx_}
    , acquisition_{ctx_, queue_, listener_, dog_, *this}
{
   ctx_.cfg.nodes.assign(ctx_.nodes.size(), "redis://fake");
   ctx_.config_error = validate_config(ctx_.cfg);
   ctx_.tel.configure(ctx_.cfg);
}

release_listener::links client_core::listener_links()
{
   // The listener is a member: it never outlives the core, nor calls it after start().
   return {
      [this](std::size_t i, std::string const& ch) { ctx_.nodes[i]->subscribe(ch); },
      [this](std::size_t i, std::string const& ch) { ctx_.nodes[i]->unsubscribe(ch); },
   };
}

void client_core::start()
{
   if (ctx_.config_error)
      return;
   if (ctx_.nodes.empty())
      ctx_.nodes = make_nodes(ctx_.ex, ctx_.cfg);
   for (std::size_t i = 0; i < ctx_.nodes.size(); ++i) {
      // A failover's new master: the releases that wait for a retry go there at once.
      ctx_.nodes[i]->on_reroute([work = std::weak_ptr<owned_work>(ctx_.work)] {
         if (auto w = work.lock())
            w->hurry();
      });
      // Nodes may outlive the core by a little (their loops end asynchronously): hold it weakly.
      ctx_.nodes[i]->start([this, weak = weak_from_this(), i](push_event const& e) {
         if (auto alive = weak.lock())
            listener_.on_push(i, e);
      });
   }
}

void client_core::halt()
{
   ctx_.stopped = true;
   dog_.stop();  // held leases expire by their TTL
   // Wake every sleeping and queued waiter: each sees `stopped` and completes.
   listener_.wake_all();
   queue_.close();
}

void client_core::detach_logger() noexcept
{
   if (logger_)
      *logger_ = nullptr;
}

void client_core::stop()
{
   halt();
   ctx_.work->close();
   for (auto& n : ctx_.nodes)
      n->stop();
}

asio::awaitable<error_code> client_core::close(milliseconds bound)
{
   halt();
   // The operations in flight and the owned releases end, or the bound passes.
   bool const clean = co_await ctx_.work->idle_within(ctx_.ex, bound);
   stop();
   co_return clean ? error_code{} : error_code{asio::error::timed_out};
}

metrics_snapshot client_core::metrics() const
{
   return ctx_.tel.snapshot(ctx_.nodes);
}

void client_core::leave_slot(std::string const& name) noexcept
{
   if (queue_.leave(name))
      listener_.release(release_channel(ctx_.cfg.prefix, name));
}

asio::awaitable<client_core::lock_result> client_core::lock(std::string name, lock_options opts,
                                                            bool try_only, report* diag)
{
   lease_kind kind{opts.fair ? lease_kind::of::fair : lease_kind::of::lock};
   auto op =
      async_lock(std::move(name), std::move(opts), try_only, diag, std::move(kind), use_tuple);
   auto [ec, held] = co_await std::move(op);
   co_return lock_result{ec, std::move(held)};
}

void client_core::unlock(std::shared_ptr<lease_state> st, report* diag,
                         asio::any_completion_handler<void(error_code)> h, bool on_client)
{
   // The handler keeps the client alive until it completes.
   unlock_lease(ctx_, queue_, std::move(st), diag, std::move(h), shared_from_this(), on_client);
}

asio::awaitable<error_code> client_core::extend(std::shared_ptr<lease_state> st, milliseconds ttl,
                                                report* diag)
{
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   work_guard in_flight{ctx_.work};  // a graceful close waits for this operation
   co_return co_await extend_lease(ctx_, std::move(st), ttl, diag);
}

}  // namespace locksmith::detail
