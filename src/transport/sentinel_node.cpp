// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/sentinel_node.hpp"

#include "sansio/scripts.hpp"

namespace locksmith::detail {
namespace asio = boost::asio;
using namespace std::chrono_literals;

sentinel_node::sentinel_node(asio::any_io_executor ex, node_url url, config const& cfg,
                             std::shared_ptr<node_fleet> fleet, std::size_t index)
    : ex_{ex}
    , url_{url}
    , cfg_{cfg}
    , inner_{std::make_shared<redis_node>(std::move(ex), std::move(url), cfg, std::move(fleet),
                                          index)}
    , releases_{kept_releases, kept_releases_for}
    , log_{cfg}
{}

void sentinel_node::start(push_handler on_push)
{
   inner_->start(std::move(on_push));
   // Weakly: the watch's loops must not keep the node alive.
   auto const weak = weak_from_this();
   watch_ = std::make_shared<sentinel_watch>(
      ex_, url_, cfg_, inner_,
      sentinel_watch::actions{.follow =
                                 [weak] {
                                    if (auto self = weak.lock())
                                       self->inner_->follow_master();
                                 },
                              .arrived =
                                 [weak] {
                                    if (auto self = weak.lock()) {
                                       self->send_releases_again();
                                       if (self->on_reroute_)
                                          self->on_reroute_();
                                    }
                                 }});
   watch_->start();
}

void sentinel_node::stop()
{
   if (watch_)
      watch_->stop();
   inner_->stop();
}

void sentinel_node::do_eval(std::shared_ptr<script_call const> call,
                            std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                            std::function<void(node_reply&&)> done, bool even_if_silent)
{
   auto d = keeping(call, std::move(done));
   if (even_if_silent)
      inner_->eval_even_if_silent(std::move(call), timeout, std::move(still_wanted), std::move(d));
   else
      inner_->eval(std::move(call), timeout, std::move(still_wanted), std::move(d));
}

std::function<void(node_reply&&)>
sentinel_node::keeping(std::shared_ptr<script_call const> const& call,
                       std::function<void(node_reply&&)> done)
{
   if (call->code != &release_script())
      return done;
   return [weak = weak_from_this(), call, done = std::move(done)](node_reply&& r) {
      // A release that the master answered (whatever it found): it may be lost with that master.
      if (auto self = weak.lock(); self && !r.ec && !r.resp.has_error())
         self->releases_.add(call, std::chrono::steady_clock::now());
      done(std::move(r));
   };
}

void sentinel_node::send_releases_again()
{
   // All of them, not the last few of each name (cluster_node): the old master went on granting
   // and releasing until the switch, and the release that a key left on the new master needs is
   // the first one after the promotion, a second before.
   auto const calls = releases_.since(std::chrono::steady_clock::now());
   if (calls.empty())
      return;
   log_(log_level::info, [&] {
      return name() + ": sending the last " + std::to_string(calls.size()) +
             " releases again to the new master";
   });
   for (auto const& c : calls)
      inner_->eval_even_if_silent(
         c, resend_timeout, [] { return true; }, [](node_reply&&) {});
}

}  // namespace locksmith::detail
