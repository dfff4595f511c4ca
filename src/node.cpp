// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "node.hpp"

#include <boost/asio/cancel_after.hpp>
#include <boost/asio/consign.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/context.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

namespace {

redis::config make_redis_config(node_url const& url, config const& cfg)
{
   redis::config rc;
   rc.addr = {url.host, url.port};
   rc.use_ssl = url.tls;
   rc.use_setup = true;
   rc.setup.clear();
   if (url.user.empty() && url.password.empty())
      rc.setup.hello_setname("locksmith");
   else
      rc.setup.hello_setname(url.user.empty() ? "default" : url.user, url.password, "locksmith");
   if (url.database != 0)
      rc.setup.push("SELECT", url.database);
   rc.connect_timeout = std::chrono::seconds{2};
   rc.resolve_timeout = std::chrono::seconds{2};
   rc.reconnect_wait_interval = cfg.reconnect_wait;
   rc.health_check_interval = cfg.health_check_interval;
   return rc;
}

// Keeps the last connection problem (connection refused, timeout...) so that a failed call can
// say why, instead of only "timed out".
redis::logger make_logger(std::shared_ptr<std::string> last_problem)
{
   return redis::logger{
      redis::logger::level::warning,
      [last_problem](redis::logger::level, std::string_view msg) { *last_problem = msg; }};
}

void push_eval(redis::request& req, std::string_view cmd, std::string_view code,
               std::vector<std::string> const& keys, std::vector<std::string> const& args)
{
   std::vector<std::string_view> all;
   all.reserve(1 + keys.size() + args.size());
   auto const nkeys = std::to_string(keys.size());
   all.push_back(nkeys);
   all.insert(all.end(), keys.begin(), keys.end());
   all.insert(all.end(), args.begin(), args.end());
   req.push_range(cmd, code, all.begin(), all.end());
}

}  // namespace

script_call::script_call(script const& s, std::vector<std::string> k, std::vector<std::string> a)
: code{&s}
, keys{std::move(k)}
, args{std::move(a)}
{
   push_eval(by_sha, "EVALSHA", s.sha1, keys, args);
}

boost::redis::request const& script_call::by_text() const
{
   if (!by_text_) {
      by_text_.emplace();
      push_eval(*by_text_, "EVAL", code->text, keys, args);
   }
   return *by_text_;
}

redis_node::redis_node(asio::any_io_executor ex, node_url url, config const& cfg, message_handler on_message)
: cfg_{make_redis_config(url, cfg)}
, name_{redacted(url)}
, last_problem_{std::make_shared<std::string>()}
, conn_{ex, asio::ssl::context{asio::ssl::context::tlsv12_client}, make_logger(last_problem_)}
, on_message_{std::move(on_message)}
{
   conn_.set_receive_response(pushes_);
}

void redis_node::start()
{
   conn_.async_run(cfg_, asio::consign(asio::detached, shared_from_this()));
   receive_loop();
   // Load the scripts ahead of the first calls, so that a burst of them does not all meet
   // NOSCRIPT. Best effort: a server that refuses SCRIPT LOAD (ACLs) still gets EVAL on NOSCRIPT,
   // and so does one whose cache is emptied later (restart, failover, SCRIPT FLUSH).
   auto req = std::make_shared<redis::request>();
   for (auto const* s : {&acquire_script(), &release_script(), &extend_script()})
      req->push("SCRIPT", "LOAD", s->text);
   auto resp = std::make_shared<redis::generic_response>();
   conn_.async_exec(*req, *resp, [req, resp](error_code, std::size_t) { });
}

void redis_node::stop()
{
   stopped_ = true;
   conn_.cancel();
}

struct redis_node::pending_eval {
   std::shared_ptr<script_call const> call;
   std::function<bool()> still_wanted;
   std::function<void(node_reply&&)> done;
   std::chrono::steady_clock::time_point start;
   std::chrono::steady_clock::time_point deadline;
   node_reply reply;
};

void redis_node::eval(
   std::shared_ptr<script_call const> call,
   std::chrono::milliseconds timeout,
   std::function<bool()> still_wanted,
   std::function<void(node_reply&&)> done)
{
   auto const now = std::chrono::steady_clock::now();
   auto p = std::make_shared<pending_eval>(
      pending_eval{std::move(call), std::move(still_wanted), std::move(done), now, now + timeout, {}});
   exec_eval(std::move(p), false);
}

void redis_node::exec_eval(std::shared_ptr<pending_eval> p, bool by_text)
{
   auto const& req = by_text ? p->call->by_text() : p->call->by_sha;
   auto const left = p->deadline - std::chrono::steady_clock::now();
   p->reply.resp = {};
   auto& resp = p->reply.resp;
   conn_.async_exec(
      req, resp,
      asio::cancel_after(left, [self = shared_from_this(), p, by_text](error_code ec, std::size_t) {
         auto& r = p->reply;
         // The script cache is empty after a restart, a failover or SCRIPT FLUSH: send the text once.
         if (!ec && !by_text && is_noscript(r.resp) && p->still_wanted())
            return self->exec_eval(std::move(p), true);
         if (ec == asio::error::operation_aborted && !self->stopped_)
            ec = asio::error::timed_out;
         r.ec = ec;
         if (ec) {
            r.server_message = *self->last_problem_;
         } else if (r.resp.has_error()) {
            r.server_message = server_error(r.resp);
         }
         r.latency = std::chrono::steady_clock::now() - p->start;
         p->done(std::move(r));
      }));
}

void redis_node::subscribe(std::string const& channel)
{
   auto req = std::make_shared<redis::request>();
   req->subscribe({channel});
   conn_.async_exec(*req, redis::ignore, [req](error_code, std::size_t) { });
}

void redis_node::unsubscribe(std::string const& channel)
{
   auto req = std::make_shared<redis::request>();
   req->unsubscribe({channel});
   conn_.async_exec(*req, redis::ignore, [req](error_code, std::size_t) { });
}

void redis_node::receive_loop()
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

void redis_node::dispatch_pushes()
{
   if (pushes_.has_error()) {
      pushes_ = {};
      return;
   }
   auto const& nodes = pushes_.value();
   // A push is an aggregate at depth 0: "message", channel, payload.
   for (std::size_t i = 0; i + 2 < nodes.size(); ++i) {
      if (nodes[i].depth == 0 && nodes[i].aggregate_size == 3 && nodes[i + 1].value == "message")
         on_message_(nodes[i + 2].value);
   }
   pushes_.value().clear();
}

}  // namespace locksmith::detail
