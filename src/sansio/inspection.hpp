// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The inspection of a name (client::async_inspect): the inspect script's keys, the parser of its
// reply into one node's view, and the quorum's view over the nodes' views. Pure: no sockets.
#ifndef LOCKSMITH_DETAIL_INSPECTION_HPP
#define LOCKSMITH_DETAIL_INSPECTION_HPP

#include "sansio/scripts.hpp"

#include <locksmith/error.hpp>
#include <locksmith/inspection.hpp>

#include <boost/redis/response.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// inspect.lua: reads every key of a name, and writes none.
script const& inspect_script();

/// The inspect script's KEYS for the name, in its order: the lock key, the fence key, the
/// readers, the writer-waiting marker, the holds, the fair queue and its deadlines. They share
/// the name's hash tag, so one call reads them all on a Redis Cluster.
std::vector<std::string> inspect_keys(std::string_view prefix, std::string_view name);

/// Parses the inspect script's reply into `out`'s kind, holders, holds, waiters, writer flags
/// and fence (its node, ec and server_message are left alone). error::unexpected_reply for a
/// server error or a reply of another shape.
error_code parse_inspection(boost::redis::generic_response const& r, node_inspection& out);

/// Fills the quorum's view of `in` (quorum, answered, kind, holders, fence) from its nodes: the
/// majority of in.nodes, counted over the nodes whose ec is success.
void summarize(inspection& in);

/// The error of an inspection whose nodes answered too few to make a quorum: auth_failed or
/// tls_failed when a node failed so (a fault that waiting will not mend), else unexpected_reply
/// when a node answered with an error, else quorum_unreachable. Success when a quorum answered.
error_code inspection_error(inspection const& in);

}  // namespace locksmith::detail

#endif
