// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/command_link.hpp"

#include "transport/redis_config.hpp"
#include "transport/tls.hpp"

#include "sansio/eval_reply.hpp"
#include "sansio/replicas.hpp"
#include "sansio/set_scripts.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancel_after.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <optional>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

namespace {

// Replies handed to their callers between two turns of the executor (reply_slices): small
// enough that a round of many callers' replies is split, so that the requests of the first
// ones are written while the client handles the rest; large enough that a write carries many
// requests (each write and read costs a system call on both sides).
constexpr std::size_t replies_per_turn = 16;

}  // namespace

command_link::command_link(asio::any_io_executor ex, node_url const& url, config const& cfg,
                           std::string name, bool reports_connections)
    : cfg_{make_redis_config(url, cfg)}
    , name_{std::move(name)}
    , health_{std::make_shared<link_health>()}
    , on_connected_{reports_connections ? std::make_shared<std::function<void()>>() : nullptr}
    , conn_{ex, make_tls_context(url, cfg.tls, health_),
            make_logger(health_, make_connection_log(cfg, url, "commands"), on_connected_)}
    , deadlines_{ex}
    , slices_{replies_per_turn}
    , gated_{cfg.nodes.size() > 1}
    , sentinel_{url.sentinel()}
    , wait_replicas_{cfg.wait_replicas}
    , replica_timeout_{effective_replica_timeout(cfg)}
    , log_{cfg}
{}

void command_link::on_connected(std::function<void()> f)
{
   if (on_connected_)
      *on_connected_ = std::move(f);
}

void command_link::start()
{
   run();
}

void command_link::run()
{
   // Runs until stop(), or until reconnect() cancels it to drop a connection that lost step.
   conn_.async_run(cfg_, [self = shared_from_this()](error_code) {
      self->reconnecting_ = false;
      if (!self->stopped_)
         self->run();
   });
}

void command_link::load_scripts(bool sharded)
{
   // Ahead of the first calls, so that a burst of them does not all meet NOSCRIPT (and a fair
   // holder's first acquire, decided by its first three answers, does not skip the text fallback
   // to the slowest nodes, where its key then misses). Best effort: a server that refuses SCRIPT
   // LOAD (ACLs) still gets EVAL on NOSCRIPT, and so does one whose cache is emptied later
   // (restart, failover, SCRIPT FLUSH).
   auto req = std::make_shared<redis::request>();
   for (auto const* s : every_script())
      req->push("SCRIPT", "LOAD", s->text);
   if (sharded)
      for (auto const* s : every_sharded_script())
         req->push("SCRIPT", "LOAD", s->text);
   auto resp = std::make_shared<redis::generic_response>();
   exec(*req, *resp, [self = shared_from_this(), req, resp](error_code, std::size_t) {});
}

void command_link::reconnect()
{
   if (stopped_ || reconnecting_)
      return;
   reconnecting_ = true;
   conn_.cancel(redis::operation::run);
}

void command_link::stop()
{
   stopped_ = true;
   deadlines_.stop();
   conn_.cancel();
}

struct command_link::pending_eval {
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

void command_link::eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                        std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                        send_mode mode)
{
   auto const now = std::chrono::steady_clock::now();
   bool const waits = wait_replicas_ > 0 && waits_for_replicas(*call->code);
   bool const asking = mode == send_mode::asking;
   auto p =
      std::make_shared<pending_eval>(std::move(call), std::move(still_wanted), std::move(done), now,
                                     now + timeout, node_reply{}, waits, asking, std::nullopt);
   if (stopped_)
      return refuse(*p);
   if (gated_ && !gate_.open() && mode == send_mode::gated)
      return refuse(*p);
   exec_eval(std::move(p), false);
}

void command_link::refuse(pending_eval& p)
{
   auto s = refused_step(stopped_, *health_);
   auto& r = p.reply;
   r.sent = false;
   r.ec = s.ec;
   r.server_message = std::move(s.server_message);
   asio::post(conn_.get_executor(),
              [done = std::move(p.done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void command_link::probe()
{
   auto req = std::make_shared<redis::request>();
   req->push("PING");
   auto resp = std::make_shared<redis::generic_response>();
   // No timeout: it waits for the node, across reconnects, and is the only call that does.
   exec(*req, *resp, [self = shared_from_this(), req, resp](error_code ec, std::size_t) {
      if (!self->stopped_ && self->gate_.on_probe(!ec))
         self->probe();
   });
}

redis::request const& command_link::request_for(pending_eval& p, bool by_text) const
{
   auto const& script = by_text ? p.call->by_text() : p.call->by_sha;
   if (!p.waits && !p.asking)
      return script;
   if (p.asking) {
      // ASKING applies to the next command of the connection only: the script, right behind it.
      p.built.emplace();
      p.built->push("ASKING");
      push_script(*p.built, *p.call, by_text);
   } else {
      p.built = script;
   }
   // In the same request, so no extra round trip: WAIT counts the replicas that acknowledged
   // every write of this connection so far, the script's included.
   if (p.waits)
      p.built->push("WAIT", wait_replicas_, replica_timeout_.count());
   return *p.built;
}

void command_link::exec_eval(std::shared_ptr<pending_eval> p, bool by_text)
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
      exec(req, p->replies, std::move(on_done));
   else
      exec(req, p->reply.resp, std::move(on_done));
}

void command_link::on_eval(std::shared_ptr<pending_eval> p, bool by_text, error_code ec)
{
   deadlines_.forget(p->timeout);
   auto& r = p->reply;
   // Without ASKING's OK, ahead of the script's reply.
   if (!ec && p->built)
      r.resp = first_error_wins(p->replies, p->asking ? 1 : 0);
   eval_completion const c{.ec = ec,
                           .before_deadline = std::chrono::steady_clock::now() < p->deadline,
                           .by_text = by_text,
                           .stopped = stopped_,
                           .sentinel = sentinel_,
                           .wait_replicas = p->waits ? wait_replicas_ : 0,
                           .replica_timeout = replica_timeout_};
   auto step = next_eval_step(c, *p->call->code, *health_, p->still_wanted, r.resp);
   if (step.next == eval_step::action::send_text) {
      log_(log_level::info, [&] { return name_ + ": NOSCRIPT, sent by EVAL"; });
      return exec_eval(std::move(p), true);
   }
   // Every node keeps track of its silence (a cluster asks a silent master for its slot map
   // last); only a RedLock's nodes refuse calls meanwhile, and probe.
   if (step.timed_out && gate_.on_timeout() && gated_) {
      log_(log_level::warning,
           [&] { return name_ + ": a call timed out; no more are sent until it answers"; });
      probe();
   } else if (step.answered) {
      gate_.on_answer();
   }
   if (step.demoted)
      reconnect();
   r.ec = step.ec;
   r.sent = !step.ran_nowhere;
   r.server_message = std::move(step.server_message);
   r.latency = std::chrono::steady_clock::now() - p->start;
   deliver(std::move(p));
}

void command_link::deliver(std::shared_ptr<pending_eval> p)
{
   if (slices_.deliver_now(waiting_.size()))
      p->done(std::move(p->reply));
   else
      waiting_.push_back(std::move(p));
   post_turn();
}

void command_link::post_turn()
{
   // Posted after the delivered replies' callers sent their next requests: behind the writer
   // that those woke.
   if (slices_.turn_needed())
      asio::post(conn_.get_executor(), [self = shared_from_this()] { self->take_turn(); });
}

void command_link::take_turn()
{
   for (auto n = slices_.on_turn(waiting_.size()); n > 0; --n) {
      auto p = std::move(waiting_.front());
      waiting_.pop_front();
      p->done(std::move(p->reply));
   }
   post_turn();
}

void command_link::command(std::shared_ptr<redis::request const> req,
                           std::chrono::milliseconds timeout,
                           std::function<void(error_code, redis::generic_response&&)> done)
{
   auto resp = std::make_shared<redis::generic_response>();
   exec(*req, *resp,
        asio::cancel_after(timeout, [self = shared_from_this(), req, resp,
                                     done = std::move(done)](error_code ec, std::size_t) {
           if (ec == asio::error::operation_aborted && !self->stopped_)
              ec = asio::error::timed_out;
           done(ec, std::move(*resp));
        }));
}

}  // namespace locksmith::detail
