// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "fanout.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;

std::size_t fanout_result::count(vote v) const noexcept
{
   return static_cast<std::size_t>(
      std::count_if(nodes.begin(), nodes.end(), [v](node_result const& n) { return n.v == v; }));
}

bool fanout_result::server_error() const noexcept
{
   return std::any_of(nodes.begin(), nodes.end(), [](node_result const& n) {
      return n.v == vote::failed && !n.reply.ec && (n.reply.resp.has_error() || n.malformed);
   });
}

namespace {

// How one node voted, from the script's reply. A reply that is neither an error nor of the
// script's shape is no vote.
vote classify(script const& code, node_result& r)
{
   if (r.reply.ec)
      return vote::failed;
   bool const acquire = &code == &acquire_script();
   auto const ec = acquire ? parse_acquire(r.reply.resp, r.acquire) : parse_ownership(r.reply.resp, r.own);
   if (ec) {
      r.malformed = !r.reply.resp.has_error();
      return vote::failed;
   }
   if (acquire)
      return r.acquire.acquired ? vote::yes : vote::no;
   return r.own == ownership::done ? vote::yes : vote::no;
}

struct fanout_op : std::enable_shared_from_this<fanout_op> {
   fanout_op(std::size_t n, fanout_handler h)
   : votes{n}
   , handler{std::move(h)}
   {
      result.nodes.resize(n);
   }

   void on_reply(script const& code, std::size_t i, node_reply&& reply, node& from)
   {
      node_result late;
      // Once decided, `result` may have been moved out: a late reply is looked at apart.
      auto& r = handler ? result.nodes[i] : late;
      r.reply = std::move(reply);
      r.v = classify(code, r);
      // A reply of the wrong shape means the connection matches replies to the wrong requests:
      // nothing more it answers can be trusted until it is a new connection.
      if (r.malformed)
         from.reconnect();
      if (!handler)
         return;
      if (votes.record(r.v == vote::yes) != outcome::pending)
         complete({}, votes.state());
   }

   void complete(error_code ec, outcome decision)
   {
      auto slot = asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected())
         slot.clear();
      result.decision = decision;
      auto ex = asio::get_associated_executor(handler);
      // Late replies find no handler and leave `result` alone, so it can be moved out.
      asio::dispatch(ex, [h = std::move(handler), ec, r = std::move(result)]() mutable {
         std::move(h)(ec, std::move(r));
      });
   }

   vote_counter votes;
   fanout_handler handler;
   fanout_result result;
};

}  // namespace

void start_fanout(
   asio::any_io_executor const& io,
   std::vector<std::shared_ptr<node>> const& nodes,
   std::shared_ptr<script_call const> call,
   std::chrono::milliseconds timeout,
   fanout_handler handler)
{
   auto op = std::make_shared<fanout_op>(nodes.size(), std::move(handler));
   auto slot = asio::get_associated_cancellation_slot(op->handler);
   if (slot.is_connected()) {
      slot.assign([weak = std::weak_ptr<fanout_op>(op), io](asio::cancellation_type_t) {
         auto op = weak.lock();
         if (!op || !op->handler)
            return;
         // Never complete from inside the canceller's call: post.
         asio::post(io, [op] {
            if (op->handler)
               op->complete(asio::error::operation_aborted, outcome::pending);
         });
      });
   }
   script const& code = *call->code;
   // Only an acquire must not fall back once decided (it would land behind the release sent
   // meanwhile); a release or extend is idempotent and must reach every node.
   bool const acquire = &code == &acquire_script();
   for (std::size_t i = 0; i < nodes.size(); ++i)
      nodes[i]->eval(
         call, timeout, [op, acquire] { return !acquire || static_cast<bool>(op->handler); },
         [op, &code, i, n = nodes[i]](node_reply&& r) { op->on_reply(code, i, std::move(r), *n); });
}

}  // namespace locksmith::detail
