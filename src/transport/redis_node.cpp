// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/redis_node.hpp"

#include "sansio/quarantine.hpp"

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

redis_node::redis_node(asio::any_io_executor ex, node_url url, config const& cfg,
                       std::shared_ptr<node_fleet> fleet, std::size_t index)
    : name_{redacted(url)}
    , cmd_{std::make_shared<command_link>(ex, url, cfg, name_,
                                          effective_quarantine(cfg).count() > 0)}
    , sub_{std::make_shared<subscriber_link>(ex, url, cfg)}
    , quarantine_{effective_quarantine(cfg)}
    , trusted_from_{quarantine_.count() > 0 ? std::chrono::steady_clock::time_point::max()
                                            : std::chrono::steady_clock::time_point::min()}
    , fleet_{std::move(fleet)}
    , index_{index}
    , mark_key_{trusted_run_key(cfg.prefix)}
    , judge_timer_{ex}
    , log_{cfg}
{}

void redis_node::start(push_handler on_push)
{
   if (fleet_)
      fleet_->nodes.push_back(weak_from_this());
   if (quarantine_.count() > 0) {
      cmd_->on_connected([weak = weak_from_this()] {
         if (auto self = weak.lock())
            self->on_command_connection();
      });
      learn_uptime(1);  // queued first: answered before any script of the first connection
   }
   cmd_->start();
   sub_->start(std::move(on_push));
   cmd_->load_scripts(sharded_scripts_);
}

void redis_node::stop()
{
   cmd_->stop();
   judge_timer_.cancel();
   sub_->stop();
}

void redis_node::reconnect()
{
   cmd_->reconnect();
}

void redis_node::follow_master()
{
   cmd_->reconnect();
   sub_->drop();
}

void redis_node::do_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                         std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                         bool even_if_silent)
{
   cmd_->eval(std::move(call), timeout, std::move(still_wanted), std::move(done),
              even_if_silent ? command_link::send_mode::even_if_silent
                             : command_link::send_mode::gated);
}

void redis_node::eval_asking(std::shared_ptr<script_call const> call,
                             std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                             std::function<void(node_reply&&)> done)
{
   cmd_->eval(std::move(call), timeout, std::move(still_wanted), std::move(done),
              command_link::send_mode::asking);
}

void redis_node::command(std::shared_ptr<redis::request const> req,
                         std::chrono::milliseconds timeout,
                         std::function<void(error_code, redis::generic_response&&)> done)
{
   cmd_->command(std::move(req), timeout, std::move(done));
}

void redis_node::subscribe(std::string const& channel)
{
   sub_->subscribe(channel);
}

void redis_node::unsubscribe(std::string const& channel)
{
   sub_->unsubscribe(channel);
}

void redis_node::shard_subscribe(std::string const& channel, bool subscribe)
{
   sub_->shard_subscribe(channel, subscribe);
}

}  // namespace locksmith::detail
