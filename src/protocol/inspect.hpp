// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The inspection of a name (client::async_inspect): the inspect script sent to every node at
// once, and every answer waited for, within one node timeout.
#ifndef LOCKSMITH_SRC_INSPECT_HPP
#define LOCKSMITH_SRC_INSPECT_HPP

#include "transport/node.hpp"

#include <locksmith/inspection.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::detail {

using inspect_handler = boost::asio::any_completion_handler<void(error_code, inspection)>;

/// Sends inspect.lua for `name` to every node at once, each with its own `timeout`, and
/// completes once every node answered or failed: success with the nodes' and the quorum's views
/// when a quorum answered, else inspection_error's code with what was learnt. Reads only: no
/// vote, no key written, nothing to release. `nodes` must not be empty.
///
/// Cancellation (any type): completes with operation_aborted, dispatched on the handler's
/// executor from `io`; the reads in flight go on and are ignored.
void start_inspect(boost::asio::any_io_executor const& io,
                   std::vector<std::shared_ptr<node>> const& nodes, std::string const& prefix,
                   std::string name, std::chrono::milliseconds timeout, inspect_handler h);

}  // namespace locksmith::detail

#endif
