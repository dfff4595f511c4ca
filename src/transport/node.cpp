// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/node.hpp"

#include "transport/command_exec.hpp"
#include "transport/log.hpp"
#include "transport/redis_config.hpp"
#include "transport/tls.hpp"

#include "sansio/quarantine.hpp"
#include "sansio/replicas.hpp"
#include "sansio/script_errors.hpp"
#include "sansio/set_scripts.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/asio/cancel_after.hpp>
#include <boost/asio/consign.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

namespace {

// Keeps the last connection problem (connection refused, timeout...) so that a failed call can
// say why, instead of only "timed out", and learns from it when credentials or TLS fail. Info
// level: the lines that say an attempt started and that its setup succeeded are info, and come
// only once per connection attempt. With `on_connected`, it also reports each new connection:
// Boost.Redis logs "Connected to ..." at info level once the socket is up, before any request is
// written on it (the restart quarantine asks the server's uptime then).
redis::logger make_logger(std::shared_ptr<link_health> health, std::shared_ptr<connection_log> log,
                          std::shared_ptr<std::function<void()>> on_connected = nullptr)
{
   using level = redis::logger::level;
   return redis::logger{level::info, [health, log, on_connected](level l, std::string_view msg) {
                           health->on_log(l <= level::warning, msg);
                           log->on_line(l <= level::warning, msg);
                           if (on_connected && *on_connected && msg.starts_with("Connected to"))
                              (*on_connected)();
                        }};
}

void push_eval(redis::request& req, std::string_view cmd, std::string_view code,
               std::vector<std::string> const& keys, std::vector<std::string> const& args)
{
   boost::container::small_vector<std::string_view, 12> all;
   auto const nkeys = std::to_string(keys.size());
   all.push_back(nkeys);
   all.insert(all.end(), keys.begin(), keys.end());
   all.insert(all.end(), args.begin(), args.end());
   // The whole request in one allocation: each bulk string costs its length and at most 16
   // bytes of framing (`$<length>\r\n...\r\n`), and so does the array header.
   std::size_t size = 16 + cmd.size() + 16 + code.size() + 16;
   for (auto const& a : all)
      size += a.size() + 16;
   req.reserve(req.payload().size() + size);
   req.push_range(cmd, code, all.begin(), all.end());
}

// The unfenced acquire (unfenced_acquire_script): the lock key's SET NX PX and, unless under
// ASKING (which covers one command only), its PTTL, for a waiter that does not get it.
void push_set_nx(redis::request& req, std::vector<std::string> const& keys,
                 std::vector<std::string> const& args, bool with_pttl)
{
   req.push("SET", keys.at(0), args.at(0), "NX", "PX", args.at(1));
   if (with_pttl)
      req.push("PTTL", keys[0]);
}

}  // namespace

script_call::script_call(script const& s, std::vector<std::string> k, std::vector<std::string> a)
    : code{&s}
    , keys{std::move(k)}
    , args{std::move(a)}
{
   if (s.plain)
      push_set_nx(by_sha, keys, args, true);
   else
      push_eval(by_sha, "EVALSHA", s.sha1, keys, args);
}

boost::redis::request const& script_call::by_text() const
{
   if (code->plain)
      return by_sha;  // never NOSCRIPT
   if (!by_text_) {
      by_text_.emplace();
      push_eval(*by_text_, "EVAL", code->text, keys, args);
   }
   return *by_text_;
}

redis_node::redis_node(asio::any_io_executor ex, node_url url, config const& cfg,
                       std::shared_ptr<node_fleet> fleet, std::size_t index)
    : cfg_{make_redis_config(url, cfg)}
    , name_{redacted(url)}
    , marker_{connection_marker(cfg.prefix)}
    , cmd_health_{std::make_shared<link_health>()}
    , sub_health_{std::make_shared<link_health>()}
    , on_connected_{effective_quarantine(cfg).count() > 0
                       ? std::make_shared<std::function<void()>>()
                       : nullptr}
    , cmd_{ex, make_tls_context(url, cfg.tls, cmd_health_),
           make_logger(cmd_health_, make_connection_log(cfg, url, "commands"), on_connected_)}
    , sub_{ex, make_tls_context(url, cfg.tls, sub_health_),
           make_logger(sub_health_, make_connection_log(cfg, url, "pub/sub"))}
    , deadlines_{ex}
    , gated_{cfg.nodes.size() > 1}
    , sentinel_{url.sentinel()}
    , wait_replicas_{cfg.wait_replicas}
    , replica_timeout_{effective_replica_timeout(cfg)}
    , quarantine_{effective_quarantine(cfg)}
    , trusted_from_{quarantine_.count() > 0 ? std::chrono::steady_clock::time_point::max()
                                            : std::chrono::steady_clock::time_point::min()}
    , fleet_{std::move(fleet)}
    , index_{index}
    , mark_key_{trusted_run_key(cfg.prefix)}
    , judge_timer_{ex}
    , log_{cfg}
{
   sub_.set_receive_response(pushes_);
}

void redis_node::start(push_handler on_push)
{
   on_push_ = std::move(on_push);
   if (fleet_)
      fleet_->nodes.push_back(weak_from_this());
   if (on_connected_) {
      *on_connected_ = [weak = weak_from_this()] {
         if (auto self = weak.lock())
            self->on_command_connection();
      };
      learn_uptime(1);  // queued first: answered before any script of the first connection
   }
   run_commands();
   sub_.async_run(cfg_, asio::consign(asio::detached, shared_from_this()));
   receive_loop();
   // First on the subscriber connection, and first again in every restore after a reconnect.
   redis::request marker;
   marker.subscribe({marker_});
   send_pubsub(std::move(marker));
   // Load the scripts of every lease kind ahead of the first calls, so that a burst of them does
   // not all meet NOSCRIPT (and a fair holder's first acquire, decided by its first three
   // answers, does not skip the text fallback to the slowest nodes, where its key then misses).
   // Best effort: a server that refuses SCRIPT LOAD (ACLs) still gets EVAL on NOSCRIPT, and so does
   // one whose cache is emptied later (restart, failover, SCRIPT FLUSH).
   auto req = std::make_shared<redis::request>();
   for (auto const* s : every_script())
      req->push("SCRIPT", "LOAD", s->text);
   if (sharded_scripts_)
      for (auto const* s : every_sharded_script())
         req->push("SCRIPT", "LOAD", s->text);
   auto resp = std::make_shared<redis::generic_response>();
   exec_command(cmd_, *req, *resp,
                [self = shared_from_this(), req, resp](error_code, std::size_t) {});
}

void redis_node::run_commands()
{
   // Runs until stop(), or until reconnect() cancels it to drop a connection that lost step.
   cmd_.async_run(cfg_, [self = shared_from_this()](error_code) {
      self->reconnecting_ = false;
      if (!self->stopped_)
         self->run_commands();
   });
}

void redis_node::reconnect()
{
   if (stopped_ || reconnecting_)
      return;
   reconnecting_ = true;
   cmd_.cancel(redis::operation::run);
}

void redis_node::stop()
{
   stopped_ = true;
   deadlines_.stop();
   judge_timer_.cancel();
   cmd_.cancel();
   sub_.cancel();
}

struct redis_node::pending_eval {
   std::shared_ptr<script_call const> call;
   std::function<bool()> still_wanted;
   std::function<void(node_reply&&)> done;
   std::chrono::steady_clock::time_point start;
   std::chrono::steady_clock::time_point deadline;
   node_reply reply;
   bool waits = false;                   // a WAIT follows the script
   bool asking = false;                  // an ASKING comes before it
   std::optional<redis::request> built;  // the script with them, when either does
   redis::resp3::tree replies;           // the replies to `built`, every command's
   call_deadlines::entry timeout = {};   // cancels the call at `deadline`
};

void redis_node::eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                      std::function<bool()> still_wanted, std::function<void(node_reply&&)> done)
{
   start_eval(std::move(call), timeout, std::move(still_wanted), std::move(done), false);
}

void redis_node::eval_even_if_silent(std::shared_ptr<script_call const> call,
                                     std::chrono::milliseconds timeout,
                                     std::function<bool()> still_wanted,
                                     std::function<void(node_reply&&)> done)
{
   start_eval(std::move(call), timeout, std::move(still_wanted), std::move(done), true);
}

void redis_node::eval_asking(std::shared_ptr<script_call const> call,
                             std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                             std::function<void(node_reply&&)> done)
{
   start_eval(std::move(call), timeout, std::move(still_wanted), std::move(done), true, true);
}

void redis_node::start_eval(std::shared_ptr<script_call const> call,
                            std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                            std::function<void(node_reply&&)> done, bool even_if_silent,
                            bool asking)
{
   auto const now = std::chrono::steady_clock::now();
   bool const waits = wait_replicas_ > 0 && waits_for_replicas(*call->code);
   auto p =
      std::make_shared<pending_eval>(std::move(call), std::move(still_wanted), std::move(done), now,
                                     now + timeout, node_reply{}, waits, asking, std::nullopt);
   if (stopped_)
      return refuse(*p);
   if (gated_ && !gate_.open() && !even_if_silent)
      return refuse(*p);
   exec_eval(std::move(p), false);
}

void redis_node::refuse(pending_eval& p)
{
   auto& r = p.reply;
   r.sent = false;
   auto const& health = *cmd_health_;
   if (stopped_) {
      r.ec = asio::error::operation_aborted;
      r.server_message = "not sent: the client was stopped";
   } else if (health.lasting()) {
      r.ec = health.lasting();
      r.server_message = health.lasting_message();
   } else {
      r.ec = asio::error::timed_out;
      r.server_message = "not sent: a call timed out and the node has not answered since";
      if (!health.last_problem().empty())
         r.server_message += " (" + health.last_problem() + ")";
   }
   asio::post(cmd_.get_executor(),
              [done = std::move(p.done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void redis_node::probe()
{
   auto req = std::make_shared<redis::request>();
   req->push("PING");
   auto resp = std::make_shared<redis::generic_response>();
   // No timeout: it waits for the node, across reconnects, and is the only call that does.
   exec_command(cmd_, *req, *resp,
                [self = shared_from_this(), req, resp](error_code ec, std::size_t) {
                   if (!self->stopped_ && self->gate_.on_probe(!ec))
                      self->probe();
                });
}

redis::request const& redis_node::request_for(pending_eval& p, bool by_text) const
{
   auto const& script = by_text ? p.call->by_text() : p.call->by_sha;
   if (!p.waits && !p.asking)
      return script;
   if (p.asking) {
      // ASKING applies to the next command of the connection only: the script, right behind it.
      p.built.emplace();
      p.built->push("ASKING");
      auto const& c = *p.call;
      if (c.code->plain)
         push_set_nx(*p.built, c.keys, c.args, false);
      else
         push_eval(*p.built, by_text ? "EVAL" : "EVALSHA", by_text ? c.code->text : c.code->sha1,
                   c.keys, c.args);
   } else {
      p.built = script;
   }
   // In the same request, so no extra round trip: WAIT counts the replicas that acknowledged
   // every write of this connection so far, the script's included.
   if (p.waits)
      p.built->push("WAIT", wait_replicas_, replica_timeout_.count());
   return *p.built;
}

error_code redis_node::check_replicas(pending_eval& p) const
{
   auto& r = p.reply;
   auto const acked = take_wait_reply(r.resp);
   // A reply without a WAIT's fails to parse as the script's, later; a "taken" or "not ours"
   // wrote nothing that replicas must have.
   if (!acked || *acked >= std::int64_t{wait_replicas_} || !granted(*p.call->code, r.resp))
      return {};
   r.server_message = replicas_message(*acked, wait_replicas_, replica_timeout_);
   return error::not_enough_replicas;
}

error_code redis_node::demoted()
{
   // The master that the Sentinels named was made a replica (a failover under way): ask them
   // again. Not a lasting server error, so the attempt may be retried.
   reconnect();
   return redis::error::role_check_failed;
}

void redis_node::exec_eval(std::shared_ptr<pending_eval> p, bool by_text)
{
   auto const& req = request_for(*p, by_text);
   p->reply.resp = {};
   p->replies.clear();
   deadlines_.watch(p->timeout, p->deadline);
   auto on_done = asio::bind_cancellation_slot(
      p->timeout.slot(), [self = shared_from_this(), p, by_text](error_code ec, std::size_t) {
         self->on_eval(std::move(p), by_text, ec);
      });
   // With ASKING or WAIT, each command's reply is kept (a tree keeps every node, errors
   // included), so that the script's own error is not hidden by what follows it.
   if (p->built)
      exec_command(cmd_, req, p->replies, std::move(on_done));
   else
      exec_command(cmd_, req, p->reply.resp, std::move(on_done));
}

void redis_node::on_eval(std::shared_ptr<pending_eval> p, bool by_text, error_code ec)
{
   deadlines_.forget(p->timeout);
   auto& r = p->reply;
   // Without ASKING's OK, ahead of the script's reply.
   if (!ec && p->built)
      r.resp = first_error_wins(p->replies, p->asking ? 1 : 0);
   // The script cache is empty after a restart, a failover or SCRIPT FLUSH: send the text once.
   if (!ec && !by_text && is_noscript(r.resp) && p->still_wanted()) {
      log_(log_level::info, [&] { return name_ + ": NOSCRIPT, sent by EVAL"; });
      return exec_eval(std::move(p), true);
   }
   if (ec == asio::error::operation_aborted && !stopped_) {
      ec = asio::error::timed_out;
      // Every node keeps track of its silence (a cluster asks a silent master for its slot map
      // last); only a RedLock's nodes refuse calls meanwhile, and probe.
      if (gate_.on_timeout() && gated_) {
         log_(log_level::warning,
              [&] { return name_ + ": a call timed out; no more are sent until it answers"; });
         probe();
      }
   } else if (!ec) {
      gate_.on_answer();
   }
   auto const& health = *cmd_health_;
   if (ec && health.lasting() && !stopped_) {
      // Not a slow node: one that will not let us in until its setup or ours changes.
      ec = health.lasting();
      r.server_message = health.lasting_message();
   } else if (ec) {
      r.server_message = health.last_problem();
   } else if (r.resp.has_error()) {
      r.server_message = server_error(r.resp);
      // Redis 6 wraps a command's error inside a script in a script error of its own.
      auto const code = server_error_code(r.server_message);
      if (is_auth_error(code))
         ec = error::auth_failed;
      else if (sentinel_ && code == "READONLY")
         ec = demoted();
   } else if (p->waits) {
      ec = check_replicas(*p);
   }
   r.ec = ec;
   r.latency = std::chrono::steady_clock::now() - p->start;
   p->done(std::move(r));
}

void redis_node::command(std::shared_ptr<redis::request const> req,
                         std::chrono::milliseconds timeout,
                         std::function<void(error_code, redis::generic_response&&)> done)
{
   auto resp = std::make_shared<redis::generic_response>();
   exec_command(cmd_, *req, *resp,
                asio::cancel_after(timeout, [self = shared_from_this(), req, resp,
                                             done = std::move(done)](error_code ec, std::size_t) {
                   if (ec == asio::error::operation_aborted && !self->stopped_)
                      ec = asio::error::timed_out;
                   done(ec, std::move(*resp));
                }));
}

void redis_node::send_pubsub(redis::request req)
{
   auto r = std::make_shared<redis::request>(std::move(req));
   sub_.async_exec(*r, redis::ignore, [self = shared_from_this(), r](error_code, std::size_t) {});
}

void redis_node::subscribe(std::string const& channel)
{
   redis::request req;
   req.subscribe({channel});
   send_pubsub(std::move(req));
}

void redis_node::unsubscribe(std::string const& channel)
{
   redis::request req;
   req.unsubscribe({channel});
   send_pubsub(std::move(req));
}

void redis_node::shard_subscribe(std::string const& channel, bool subscribe)
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
   sub_.async_exec(*req, *resp, [self = shared_from_this(), req, resp](error_code ec, std::size_t) {
      if (ec || self->stopped_ || !resp->has_error())
         return;
      auto const& text = resp->error().diagnostic;
      if (!text.starts_with("ERR wrong number of arguments"))
         self->on_push_(push_event{push_event::kind::refused, {}, text, true});
   });
}

void redis_node::receive_loop()
{
   // Unread pushes stall every reply on the connection, so this loop is always waiting, and only
   // dispatches what it read before waiting again.
   sub_.async_receive2([self = shared_from_this()](error_code ec) {
      if (ec || self->stopped_)
         return;
      self->dispatch_pushes();
      self->receive_loop();
   });
}

void redis_node::dispatch_pushes()
{
   if (pushes_.has_error()) {
      // Boost.Redis keeps only the error of a batch: the pushes that came with it are lost (the
      // listener's waiters fall back on their pauses).
      auto const text = std::move(pushes_.error().diagnostic);
      pushes_ = {};
      if (!text.starts_with("ERR wrong number of arguments"))
         on_push_(push_event{push_event::kind::refused, {}, text, false});
      return;
   }
   auto const events = parse_pushes(pushes_.value(), marker_);
   pushes_.value().clear();
   for (auto const& e : events)
      on_push_(e);
}

}  // namespace locksmith::detail
