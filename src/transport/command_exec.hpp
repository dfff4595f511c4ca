// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The one way onto a node's command connection, shared by the node's files.
#ifndef LOCKSMITH_SRC_COMMAND_EXEC_HPP
#define LOCKSMITH_SRC_COMMAND_EXEC_HPP

#include <locksmith/error.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/redis/connection.hpp>

#include <cstddef>
#include <utility>

namespace locksmith::detail {

// The one way onto a command connection. A request with a command that expects no reply (SUBSCRIBE,
// UNSUBSCRIBE) would let Boost.Redis take the next reply for a push and shift every later reply
// onto the wrong request, so it is refused here, before anything is sent.
struct command_initiation {
   boost::redis::connection* conn;

   using executor_type = boost::redis::connection::executor_type;
   executor_type get_executor() const noexcept { return conn->get_executor(); }

   template <class Handler, class Response>
   void operator()(Handler&& handler, boost::redis::request const* req, Response* resp) const
   {
      if (req->get_expected_responses() != req->get_commands()) {
         auto ex = boost::asio::get_associated_executor(handler, get_executor());
         boost::asio::post(ex, [h = std::forward<Handler>(handler)]() mutable {
            std::move(h)(error_code{error::invalid_argument}, std::size_t{0});
         });
         return;
      }
      conn->async_exec(*req, *resp, std::forward<Handler>(handler));
   }
};

template <class Response, class CompletionToken>
auto exec_command(boost::redis::connection& conn, boost::redis::request const& req, Response& resp,
                  CompletionToken&& token)
{
   return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
      command_initiation{&conn}, token, &req, &resp);
}

}  // namespace locksmith::detail

#endif
