// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A `redis+sentinel://` node: the master that the Sentinels name, followed as soon as they name
// another.
#ifndef LOCKSMITH_SRC_SENTINEL_NODE_HPP
#define LOCKSMITH_SRC_SENTINEL_NODE_HPP

#include "transport/log.hpp"
#include "transport/redis_node.hpp"
#include "transport/sentinel_watch.hpp"

#include "sansio/sentinel_follow.hpp"

namespace locksmith::detail {

/// A redis_node whose connections reach the master through the Sentinels, and a sentinel_watch
/// that moves them to a new master as soon as the Sentinels announce one, instead of when the old
/// master drops them at its demotion (seconds later, after `SENTINEL FAILOVER`).
///
/// A release made on the old master after the promotion is lost for the new one, where the
/// released key stays until its TTL and keeps the name from everyone. So the node keeps the
/// plain releases (the release script: DEL of a key that holds the lease's own token, nothing
/// else) that it made in the last few seconds, and sends them again once it reached the new
/// master: each deletes a key only if it still holds the token of a lease that its holder has
/// released, so sent again it takes nothing from anybody. The other release scripts are not
/// sent again (a reentrant release counts holds down, and must not be repeated); their keys
/// wait out their TTL.
class sentinel_node final : public node, public std::enable_shared_from_this<sentinel_node> {
public:
   sentinel_node(boost::asio::any_io_executor ex, node_url url, config const& cfg,
                 std::shared_ptr<node_fleet> fleet, std::size_t index);

   void start(push_handler on_push) override;
   void stop() override;

   void on_reroute(std::function<void()> f) override { on_reroute_ = std::move(f); }
   bool follows_failovers() const noexcept override { return true; }
   void subscribe(std::string const& channel) override { inner_->subscribe(channel); }
   void unsubscribe(std::string const& channel) override { inner_->unsubscribe(channel); }
   void reconnect() override { inner_->reconnect(); }
   std::string const& name() const noexcept override { return inner_->name(); }
   bool quarantined() const noexcept override { return inner_->quarantined(); }
   bool run_unknown() const noexcept override { return inner_->run_unknown(); }
   judge_failure unjudged() const override { return inner_->unjudged(); }

private:
   void do_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                bool even_if_silent) override;
   std::function<void(node_reply&&)> keeping(std::shared_ptr<script_call const> const& call,
                                             std::function<void(node_reply&&)> done);
   void send_releases_again();

   boost::asio::any_io_executor ex_;
   node_url url_;
   config cfg_;
   std::shared_ptr<redis_node> inner_;
   std::shared_ptr<sentinel_watch> watch_;
   recent<std::shared_ptr<script_call const>> releases_;
   std::function<void()> on_reroute_;
   log_sink log_;
};

}  // namespace locksmith::detail

#endif
