// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "core.hpp"

#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/url.hpp>
#include <locksmith/detail/validate.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;

lease_state::lease_state(
   std::shared_ptr<client_core> const& c,
   std::string n,
   std::string t,
   std::uint64_t f,
   clock::time_point start,
   clock::time_point until,
   lock_options const& opts)
: core{c}
, name{std::move(n)}
, token{std::move(t)}
, fence{f}
, ttl{opts.ttl}
, drift{opts.drift}
, renewed_at{start}
, valid_until{until}
, watchdog{c->ex}
, lost_event{c->ex, clock::time_point::max()}
{ }

void lease_state::end(status s) noexcept
{
   if (st != status::held)
      return;
   st = s;
   watchdog.cancel();
   lost_event.cancel();
   if (s != status::released)
      leave_slot();
}

void lease_state::leave_slot() noexcept
{
   if (!in_slot)
      return;
   in_slot = false;
   if (auto c = core.lock())
      c->leave_slot(name);
}

client_core::client_core(asio::any_io_executor e, config c)
: ex{std::move(e)}
, cfg{std::move(c)}
, config_error{validate_config(cfg)}
, listener{ex, cfg.nodes.size(), listener_links(), cfg.subscription_linger}
, random{std::random_device{}()}
{ }

client_core::client_core(asio::any_io_executor e, config c, std::vector<std::shared_ptr<node>> given)
: ex{std::move(e)}
, cfg{std::move(c)}
, nodes{std::move(given)}
, listener{ex, nodes.size(), listener_links(), cfg.subscription_linger}
, random{std::random_device{}()}
{
   cfg.nodes.assign(nodes.size(), "redis://fake");
   config_error = validate_config(cfg);
}

release_listener::links client_core::listener_links()
{
   // The listener is a member: it never outlives the core, nor calls it after start().
   return {
      [this](std::size_t i, std::string const& ch) { nodes[i]->subscribe(ch); },
      [this](std::size_t i, std::string const& ch) { nodes[i]->unsubscribe(ch); },
   };
}

void client_core::start()
{
   if (config_error)
      return;
   if (nodes.empty())
      for (auto const& url : cfg.nodes)
         nodes.push_back(std::make_shared<redis_node>(ex, *parse_url(url), cfg));
   for (std::size_t i = 0; i < nodes.size(); ++i) {
      // Nodes may outlive the core by a little (their loops end asynchronously): hold it weakly.
      nodes[i]->start([weak = weak_from_this(), i](push_event const& e) {
         if (auto self = weak.lock())
            self->listener.on_push(i, e);
      });
   }
}

void client_core::halt()
{
   stopped = true;
   // Wake every sleeping and queued waiter: each sees `stopped` and completes.
   listener.wake_all();
   for (auto& [name, s] : slots_)
      for (auto* w : s.queue)
         w->wake->cancel();
}

void client_core::stop()
{
   halt();
   work->close();
   for (auto& n : nodes)
      n->stop();
}

asio::awaitable<error_code> client_core::close(milliseconds bound)
{
   halt();
   if (work->pending() > 0) {
      asio::steady_timer idle{ex, bound};
      work->on_idle(&idle);
      // Woken when the last operation or release ends, or at the bound.
      co_await idle.async_wait(asio::as_tuple(asio::use_awaitable));
      work->forget_idle_waiter(&idle);
   }
   bool const clean = work->pending() == 0;
   stop();
   co_return clean ? error_code{} : error_code{asio::error::timed_out};
}

asio::awaitable<error_code> client_core::enter_slot(std::string const& name, clock::time_point deadline)
{
   if (stopped)
      co_return asio::error::operation_aborted;
   auto [it, first] = slots_.try_emplace(name);
   if (first)
      co_return error_code{};
   asio::steady_timer wake{ex, deadline};
   waiter w{&wake};
   it->second.queue.push_back(&w);
   // Woken by leave_slot (granted), by the deadline, or by cancellation.
   auto [ec] = co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
   if (w.granted)
      co_return error_code{};
   auto& q = slots_.at(name).queue;
   q.erase(std::find(q.begin(), q.end(), &w));
   if (ec == asio::error::operation_aborted || stopped)
      co_return asio::error::operation_aborted;
   co_return error::wait_timeout;
}

void client_core::leave_slot(std::string const& name) noexcept
{
   auto it = slots_.find(name);
   if (it == slots_.end())
      return;
   auto& s = it->second;
   if (s.queue.empty()) {
      if (s.subscribed)
         listener.release(release_channel(cfg.prefix, name));
      slots_.erase(it);
      return;
   }
   waiter* next = s.queue.front();
   s.queue.pop_front();
   next->granted = true;
   next->wake->cancel();
}

std::shared_ptr<script_call const> client_core::release_call(std::string const& name, std::string const& token) const
{
   return std::make_shared<script_call>(
      release_script(),
      std::vector<std::string>{lock_key(cfg.prefix, name)},
      std::vector<std::string>{token, release_channel(cfg.prefix, name)});
}

void client_core::release_where_taken(
   std::string const& name,
   std::string const& token,
   fanout_result const& r,
   clock::time_point until)
{
   // A node that said taken holds someone else's key, never ours; every other one may hold ours
   // (it said yes, failed, or had not answered when the attempt was decided).
   std::vector<std::shared_ptr<node>> targets;
   for (std::size_t i = 0; i < nodes.size(); ++i)
      if (i >= r.nodes.size() || r.nodes[i].v != vote::no)
         targets.push_back(nodes[i]);
   if (!targets.empty())
      start_fanout(ex, targets, release_call(name, token), cfg.node_timeout, [](error_code, fanout_result) { },
                   persistence{until, work});
}

}  // namespace locksmith::detail
