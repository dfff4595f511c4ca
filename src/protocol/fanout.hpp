// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The quorum fan-out: one script call sent to every node at once, decided as soon as the votes
// allow. One node of one is the single-instance lock, through the same code.
#ifndef LOCKSMITH_SRC_FANOUT_HPP
#define LOCKSMITH_SRC_FANOUT_HPP

#include "protocol/cleanup.hpp"
#include "transport/node.hpp"

#include "sansio/quorum.hpp"
#include "sansio/scripts.hpp"
#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace locksmith::detail {

enum class vote : unsigned char { pending, yes, no, failed };

// The report shows a vote as a node_vote, by value: the two must stay in step.
static_assert(static_cast<int>(vote::pending) == static_cast<int>(node_vote::none) &&
              static_cast<int>(vote::yes) == static_cast<int>(node_vote::yes) &&
              static_cast<int>(vote::no) == static_cast<int>(node_vote::no) &&
              static_cast<int>(vote::failed) == static_cast<int>(node_vote::failed));

/// One node's part in a fan-out.
struct node_result {
   vote v = vote::pending;
   node_reply reply;
   acquire_reply acquire;               // acquire script, when parsed
   ownership own = ownership::expired;  // release and extend scripts, when parsed
   bool malformed = false;              // a reply, not an error, but not of the script's shape
   unsigned run = node::unknown_run;    // an acquire that set the key: the node's run then
};

/// The state of a fan-out when it was decided.
struct fanout_result {
   outcome decision = outcome::pending;
   std::vector<node_result> nodes;
   std::size_t quorum = 0;  // the yes votes that win (script_call::quorum, or the majority)

   std::size_t count(vote v) const noexcept;
   /// True when some node answered with a server error or a reply of the wrong shape (not a
   /// transport error or timeout).
   bool server_error() const noexcept;
};

using fanout_handler = boost::asio::any_completion_handler<void(error_code, fanout_result)>;

/// Told of each node's reply that comes once the fan-out was decided (or cancelled): the node's
/// index and its vote. Runs on `io`, from the reply's call.
using late_vote_handler = std::function<void(std::size_t, vote)>;

/// Sends the call to every node at once, each with its own timeout, and completes as soon as the
/// quorum is won or can no longer be won, with the results known then. Calls still in flight go
/// on and are ignored; the caller releases what they may have taken (later commands on a
/// connection run after earlier ones, so a release sent now lands after them).
///
/// With `keep` (releases), a node whose call failed (timed out, or not sent while its
/// connection was down) is sent the call again, with a growing pause (release_retry), until it
/// answers or `keep->until` has passed or the work is closed; the first failure still counts
/// as its vote, unless it is a routine operation's that `keep->wait_out_operations` waits out.
/// Each node's calls count in `keep->work` until they end. Only the nodes that
/// `keep->nodes` names are owned so (all when it is empty).
///
/// `handler` runs on `io`, from a reply's or a cancellation's call, never inside this one: it is
/// called there at once, so it must not need an executor of its own other than `io`'s (the
/// engines' coroutines and callbacks, all on the client's executor). `late`, if any, is told of
/// the votes that come after.
///
/// Cancellation (any type): completes with operation_aborted, posted on `io`.
void start_fanout(boost::asio::any_io_executor const& io,
                  std::vector<std::shared_ptr<node>> const& nodes,
                  std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                  fanout_handler handler, std::optional<persistence> keep = std::nullopt,
                  late_vote_handler late = {});

template <class CompletionToken>
auto async_fanout(boost::asio::any_io_executor const& io,
                  std::vector<std::shared_ptr<node>> const& nodes,
                  std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                  CompletionToken&& token, std::optional<persistence> keep = std::nullopt,
                  late_vote_handler late = {})
{
   return boost::asio::async_initiate<CompletionToken, void(error_code, fanout_result)>(
      [&io, &nodes, timeout](auto handler, std::shared_ptr<script_call const> c,
                             std::optional<persistence> k, late_vote_handler l) {
         start_fanout(io, nodes, std::move(c), timeout, std::move(handler), std::move(k),
                      std::move(l));
      },
      token, std::move(call), std::move(keep), std::move(late));
}

}  // namespace locksmith::detail

#endif
