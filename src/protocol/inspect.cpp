// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/inspect.hpp"

#include "sansio/inspection.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;

namespace {

struct inspect_op {
   inspect_handler handler;
   inspection result;
   std::size_t pending = 0;

   void on_reply(std::size_t i, node_reply&& reply, node& from)
   {
      if (!handler)
         return;  // cancelled: the result was handed over already
      auto& n = result.nodes[i];
      n.ec = reply.ec;
      n.server_message = std::move(reply.server_message);
      if (!n.ec && (n.ec = parse_inspection(reply.resp, n))) {
         n.server_message = server_error(reply.resp);
         // A reply of the wrong shape, not an error: the connection may be matching replies to
         // the wrong requests, as the fan-out fears (fanout.cpp).
         if (!reply.resp.has_error())
            from.reconnect();
      }
      if (--pending == 0) {
         summarize(result);
         complete(inspection_error(result));
      }
   }

   void complete(error_code ec)
   {
      auto slot = asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected())
         slot.clear();
      auto ex = asio::get_associated_executor(handler);
      asio::dispatch(ex, [h = std::move(handler), ec, r = std::move(result)]() mutable {
         std::move(h)(ec, std::move(r));
      });
   }
};

}  // namespace

void start_inspect(asio::any_io_executor const& io, std::vector<std::shared_ptr<node>> const& nodes,
                   std::string const& prefix, std::string name, std::chrono::milliseconds timeout,
                   inspect_handler h)
{
   auto op = std::make_shared<inspect_op>();
   op->handler = std::move(h);
   op->pending = nodes.size();
   op->result.nodes.resize(nodes.size());
   for (std::size_t i = 0; i < nodes.size(); ++i)
      op->result.nodes[i].node = nodes[i]->name();
   script_call::builder b{inspect_script()};
   for (auto const& k : inspect_keys(prefix, name))
      b.key(k);
   std::shared_ptr<script_call const> call = b.done();
   op->result.name = std::move(name);
   auto slot = asio::get_associated_cancellation_slot(op->handler);
   if (slot.is_connected())
      slot.assign([weak = std::weak_ptr<inspect_op>(op), io](asio::cancellation_type_t) {
         // Never complete from inside the canceller's call: post.
         asio::post(io, [weak] {
            if (auto op = weak.lock(); op && op->handler)
               op->complete(asio::error::operation_aborted);
         });
      });
   for (std::size_t i = 0; i < nodes.size(); ++i)
      nodes[i]->eval(
         call, timeout, [] { return true; },
         [op, i, n = nodes[i]](node_reply&& r) { op->on_reply(i, std::move(r), *n); });
}

}  // namespace locksmith::detail
