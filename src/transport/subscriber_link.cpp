// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/subscriber_link.hpp"

#include "transport/log.hpp"
#include "transport/redis_config.hpp"
#include "transport/tls.hpp"

#include <boost/asio/consign.hpp>
#include <boost/asio/detached.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

subscriber_link::subscriber_link(asio::any_io_executor ex, node_url const& url, config const& cfg)
    : cfg_{make_redis_config(url, cfg)}
    , marker_{connection_marker(cfg.prefix)}
    , health_{std::make_shared<link_health>()}
    , conn_{ex, make_tls_context(url, cfg.tls, health_),
            make_logger(health_, make_connection_log(cfg, url, "pub/sub"))}
{
   conn_.set_receive_response(pushes_);
}

void subscriber_link::start(push_handler on_push)
{
   on_push_ = std::move(on_push);
   conn_.async_run(cfg_, asio::consign(asio::detached, shared_from_this()));
   receive_loop();
   // First on the connection, and first again in every restore after a reconnect.
   redis::request marker;
   marker.subscribe({marker_});
   send(std::move(marker));
}

void subscriber_link::stop()
{
   stopped_ = true;
   conn_.cancel();
}

void subscriber_link::send(redis::request req)
{
   auto r = std::make_shared<redis::request>(std::move(req));
   conn_.async_exec(*r, redis::ignore, [self = shared_from_this(), r](error_code, std::size_t) {});
}

void subscriber_link::subscribe(std::string const& channel)
{
   redis::request req;
   req.subscribe({channel});
   send(std::move(req));
}

void subscriber_link::unsubscribe(std::string const& channel)
{
   redis::request req;
   req.unsubscribe({channel});
   send(std::move(req));
}

void subscriber_link::shard_subscribe(std::string const& channel, bool subscribe)
{
   // Boost.Redis 1.92 counts a reply for SSUBSCRIBE, as for any command it does not know as
   // pub/sub, but the server confirms it with a push, which the connection hands to the receive
   // loop: the request would wait forever, and take a later reply for its own. So a SUBSCRIBE
   // without channels follows it, a command that Boost.Redis counts no reply for and that the
   // server answers with an error (wrong number of arguments): that error is the reply the
   // request waits for. An error of the SSUBSCRIBE itself (MOVED) comes first and ends the request
   // instead; the SUBSCRIBE's error behind it then reads as a push, and is skipped.
   auto req = std::make_shared<redis::request>();
   req->push(subscribe ? "SSUBSCRIBE" : "SUNSUBSCRIBE", channel);
   req->push("SUBSCRIBE");
   auto resp = std::make_shared<redis::generic_response>();
   conn_.async_exec(*req, *resp,
                    [self = shared_from_this(), req, resp](error_code ec, std::size_t) {
                       if (ec || self->stopped_ || !resp->has_error())
                          return;
                       if (auto e = refusal_push(resp->error().diagnostic, true))
                          self->on_push_(*e);
                    });
}

void subscriber_link::receive_loop()
{
   // Unread pushes stall every reply on the connection, so this loop is always waiting, and only
   // dispatches what it read before waiting again.
   conn_.async_receive2([self = shared_from_this()](error_code ec) {
      if (ec || self->stopped_)
         return;
      self->dispatch_pushes();
      self->receive_loop();
   });
}

void subscriber_link::dispatch_pushes()
{
   // clear() keeps a push still being read, which the next batch completes.
   auto const events = parse_pushes(pushes_, marker_);
   pushes_.clear();
   for (auto const& e : events)
      on_push_(e);
}

void subscriber_link::drop()
{
   if (stopped_)
      return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
   error_code ignored;
   conn_.next_layer().next_layer().shutdown(boost::asio::socket_base::shutdown_both, ignored);
#pragma GCC diagnostic pop
}

}  // namespace locksmith::detail
