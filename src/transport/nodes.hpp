// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The nodes of a configuration: one per URL, of the kind its scheme names.
#ifndef LOCKSMITH_SRC_TRANSPORT_NODES_HPP
#define LOCKSMITH_SRC_TRANSPORT_NODES_HPP

#include "transport/node.hpp"

#include <locksmith/config.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <vector>

namespace locksmith::detail {

/// One node per URL of `cfg.nodes`, in their order: a Redis Cluster (`redis+cluster://`) and a
/// Sentinel group (`redis+sentinel://`) are one node, one vote, each. The URLs must have been
/// validated (validate_config).
std::vector<std::shared_ptr<node>> make_nodes(boost::asio::any_io_executor ex, config const& cfg);

}  // namespace locksmith::detail

#endif
