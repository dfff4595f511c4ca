// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/sentinel_watch.hpp"

#include "sansio/pushes.hpp"

#include <boost/redis/request.hpp>
#include <boost/redis/response.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace std::chrono_literals;

namespace {

// The channel on which each Sentinel announces a new master: `<name> <old-ip> <old-port>
// <new-ip> <new-port>`.
constexpr char const* switch_channel = "+switch-master";

// Before the next Sentinel is tried after one failed; after a whole round failed, a longer pause.
constexpr std::chrono::milliseconds next_sentinel{100};
constexpr std::chrono::milliseconds next_round{1000};

}  // namespace

// One connection to one Sentinel, with what its operations write into.
struct sentinel_watch::link {
   link(asio::any_io_executor ex, redis::logger lg)
       : conn{std::move(ex), std::move(lg)}
   {}

   redis::connection conn;
   redis::request req;
   redis::generic_response reply;
   redis::resp3::flat_tree pushes;  // whole pushes only (parse_pushes)
   endpoint sentinel;
};

sentinel_watch::sentinel_watch(asio::any_io_executor ex, node_url const& url, config const& cfg,
                               std::shared_ptr<redis_node> const& node, actions act)
    : ex_{std::move(ex)}
    , sentinels_{url.sentinels}
    , master_name_{url.master_name}
    , node_{node}
    , act_{std::move(act)}
    , node_name_{node->name()}
    , health_check_{cfg.health_check_interval}
    , retry_timer_{ex_}
    , step_timer_{ex_}
    , log_{cfg}
{}

void sentinel_watch::start()
{
   if (!sentinels_.empty())
      connect();
}

void sentinel_watch::stop()
{
   stopped_ = true;
   retry_timer_.cancel();
   step_timer_.cancel();
   if (link_)
      link_->conn.cancel();
   link_.reset();
}

void sentinel_watch::connect()
{
   auto const& s = sentinels_[next_];
   // Its failures go to our log as debug lines: the node's own connections report the faults
   // that a user feels.
   redis::logger lg{redis::logger::level::warning,
                    [log = log_, what = node_name_ + " (sentinel watch, " + s.host + ":" + s.port +
                                        ")"](redis::logger::level, std::string_view line) {
                       log(log_level::debug, [&] { return what + ": " + std::string{line}; });
                    }};
   auto l = std::make_shared<link>(ex_, std::move(lg));
   l->sentinel = s;
   l->conn.set_receive_response(l->pushes);
   link_ = l;

   redis::config rc;
   rc.addr = {s.host, s.port};
   rc.use_setup = true;
   rc.setup.clear();
   rc.setup.hello_setname("locksmith-sentinel-watch");
   rc.connect_timeout = 2s;
   rc.resolve_timeout = 2s;
   // One connection per run: when it fails, the next Sentinel is tried (on_run_end).
   rc.reconnect_wait_interval = 0s;
   rc.health_check_interval = health_check_;
   l->conn.async_run(rc, [self = shared_from_this(), l](error_code) {
      if (l == self->link_)
         self->on_run_end();
   });
   receive(l);

   // Subscribed first, so that no switch falls between the answer and the subscription; the
   // request waits for the one reply, the question's (the confirmation comes as a push).
   l->req.push("SUBSCRIBE", switch_channel);
   l->req.push("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name_);
   l->conn.async_exec(l->req, l->reply, [self = shared_from_this(), l](error_code ec, std::size_t) {
      if (ec || self->stopped_ || l != self->link_)
         return;
      auto const address = l->reply.has_error() ? std::nullopt : master_address(l->reply.value());
      if (!address) {
         // It does not know the master (or refused): another Sentinel may.
         self->log_(log_level::debug, [&] {
            return self->node_name_ + ": Sentinel " + l->sentinel.host + ":" + l->sentinel.port +
                   " does not name master " + self->master_name_;
         });
         l->conn.cancel();
         return;
      }
      self->failed_ = 0;
      self->named(*address, "named by");
   });
}

void sentinel_watch::receive(std::shared_ptr<link> l)
{
   // Always waiting: unread pushes would stall the replies behind them.
   l->conn.async_receive2([self = shared_from_this(), l](error_code ec) {
      if (ec || self->stopped_ || l != self->link_)
         return;
      self->on_pushes(*l);
      self->receive(l);
   });
}

void sentinel_watch::on_pushes(link& l)
{
   // No connection marker here: every confirmation and message reads as itself.
   auto const events = parse_pushes(l.pushes, {});
   l.pushes.clear();
   for (auto const& e : events) {
      if (e.what != push_event::kind::message || e.channel != switch_channel)
         continue;
      if (auto address = switched_master(e.payload, master_name_))
         named(std::move(*address), "switched to by");
   }
}

void sentinel_watch::on_run_end()
{
   link_->conn.cancel();
   link_.reset();
   if (stopped_)
      return;
   next_ = (next_ + 1) % sentinels_.size();
   ++failed_;
   retry_timer_.expires_after(failed_ % sentinels_.size() == 0 ? next_round : next_sentinel);
   retry_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec && !self->stopped_)
         self->connect();
   });
}

void sentinel_watch::named(std::string address, char const* how)
{
   auto const& s = link_->sentinel;
   if (follow_.named(address))
      log_(log_level::info, [&] {
         return node_name_ + ": master " + address + ", " + how + " Sentinel " + s.host + ":" +
                s.port;
      });
   step();
}

void sentinel_watch::step()
{
   auto node = node_.lock();
   if (!node || stopped_)
      return;
   auto const& health = node->command_health();
   auto const s =
      follow_.decide({health.server(), health.connections()}, std::chrono::steady_clock::now());
   if (s.reconnect) {
      log_(log_level::info, [&] {
         return node_name_ + ": connected to " + health.server() + ", reconnecting to follow " +
                follow_.target();
      });
      act_.follow();
   }
   if (s.arrived)
      act_.arrived();
   if (!s.again)
      return;
   // Replaces a wait already set: its handler sees operation_aborted and does nothing.
   step_timer_.expires_after(*s.again);
   step_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec && !self->stopped_)
         self->step();
   });
}

}  // namespace locksmith::detail
