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
   leave_slot(s == status::released);
}

void lease_state::leave_slot(bool released) noexcept
{
   if (!in_slot)
      return;
   in_slot = false;
   if (auto c = core.lock())
      c->leave_slot(name, released);
}

client_core::client_core(asio::any_io_executor e, config c)
: ex{std::move(e)}
, cfg{std::move(c)}
, config_error{validate_config(cfg)}
, random{std::random_device{}()}
{ }

client_core::client_core(asio::any_io_executor e, config c, std::vector<std::shared_ptr<node>> given)
: ex{std::move(e)}
, cfg{std::move(c)}
, nodes{std::move(given)}
, random{std::random_device{}()}
{
   cfg.nodes.assign(nodes.size(), "redis://fake");
   config_error = validate_config(cfg);
}

void client_core::start()
{
   if (config_error)
      return;
   if (!nodes.empty()) {
      for (auto& n : nodes)
         n->start();
      return;
   }
   // Nodes may outlive the core by a little (their loops end asynchronously): hold it weakly.
   auto on_msg = [weak = weak_from_this()](std::string_view ch) {
      if (auto self = weak.lock())
         self->on_message(ch);
   };
   for (auto const& url : cfg.nodes) {
      nodes.push_back(std::make_shared<redis_node>(ex, *parse_url(url), cfg, on_msg));
      nodes.back()->start();
   }
}

void client_core::stop()
{
   stopped = true;
   for (auto& n : nodes)
      n->stop();
   // Wake every sleeping and queued waiter: each sees `stopped` and completes.
   for (auto& [name, ch] : channels_)
      for (auto* t : ch.sleepers)
         t->cancel();
   for (auto& [name, s] : slots_)
      for (auto* w : s.queue)
         w->wake->cancel();
}

asio::awaitable<client_core::entry> client_core::enter_slot(
   std::string const& name,
   clock::time_point deadline,
   bool by_message)
{
   if (stopped)
      co_return entry{asio::error::operation_aborted};
   auto [it, first] = slots_.try_emplace(name);
   if (first)
      co_return entry{};
   asio::steady_timer wake{ex, deadline};
   waiter w{&wake, by_message};
   it->second.queue.push_back(&w);
   // Woken by leave_slot (granted), by the deadline, or by cancellation.
   auto [ec] = co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
   if (w.granted)
      co_return entry{{}, w.after_release, w.seen};
   auto& q = slots_.at(name).queue;
   q.erase(std::find(q.begin(), q.end(), &w));
   if (ec == asio::error::operation_aborted || stopped)
      co_return entry{asio::error::operation_aborted};
   co_return entry{error::wait_timeout};
}

void client_core::leave_slot(std::string const& name, bool released) noexcept
{
   auto it = slots_.find(name);
   if (it == slots_.end())
      return;
   auto& s = it->second;
   if (s.queue.empty()) {
      if (s.subscribed)
         unsubscribe(release_channel(cfg.prefix, name));
      slots_.erase(it);
      return;
   }
   auto const channel = release_channel(cfg.prefix, name);
   waiter* next = s.queue.front();
   s.queue.pop_front();
   next->granted = true;
   next->after_release = released;
   if (released && next->by_message && !s.subscribed) {
      subscribe(channel);  // sent before the release, so its message reaches us
      s.subscribed = true;
   }
   next->seen = messages(channel);
   next->wake->cancel();
}

void client_core::subscribe(std::string const& channel)
{
   auto& ch = channels_[channel];
   if (ch.refs++ == 0)
      for (auto& n : nodes)
         n->subscribe(channel);
}

void client_core::unsubscribe(std::string const& channel) noexcept
{
   auto it = channels_.find(channel);
   if (it == channels_.end() || --it->second.refs > 0)
      return;
   channels_.erase(it);
   for (auto& n : nodes)
      n->unsubscribe(channel);
}

std::uint64_t client_core::messages(std::string const& channel) const
{
   auto it = channels_.find(channel);
   return it == channels_.end() ? 0 : it->second.messages;
}

void client_core::on_message(std::string_view channel)
{
   auto it = channels_.find(channel);
   if (it == channels_.end())
      return;
   ++it->second.messages;
   for (auto* t : it->second.sleepers)
      t->cancel();
}

std::shared_ptr<script_call const> client_core::release_call(std::string const& name, std::string const& token) const
{
   return std::make_shared<script_call>(
      release_script(),
      std::vector<std::string>{lock_key(cfg.prefix, name)},
      std::vector<std::string>{token, release_channel(cfg.prefix, name)});
}

void client_core::release_everywhere(std::string const& name, std::string const& token)
{
   start_fanout(ex, nodes, release_call(name, token), cfg.node_timeout, [](error_code, fanout_result) { });
}

}  // namespace locksmith::detail
