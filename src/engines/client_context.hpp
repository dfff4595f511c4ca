// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What every part of a client shares: its executor, its config, its nodes and the work it owns.
// Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_CLIENT_CONTEXT_HPP
#define LOCKSMITH_SRC_CLIENT_CONTEXT_HPP

#include "protocol/cleanup.hpp"
#include "transport/node.hpp"
#include "engines/telemetry.hpp"

#include <locksmith/config.hpp>
#include <locksmith/error.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <vector>

namespace locksmith::detail {

struct client_context {
   boost::asio::any_io_executor ex;
   config cfg;
   error_code config_error;  // validate_config(cfg): every operation completes with it
   std::vector<std::shared_ptr<node>> nodes;
   std::shared_ptr<owned_work> work = std::make_shared<owned_work>();  // what close() waits for
   bool stopped = false;  // the client was closed, cancelled or destroyed: operations end at once
   telemetry tel = {};    // log lines and metrics
   // A node is a Redis Cluster: the keys of one script call must share one slot, so renewals
   // are batched per slot.
   bool one_slot_per_call = false;
};

}  // namespace locksmith::detail

#endif
