// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_REPLICAS_HPP
#define LOCKSMITH_DETAIL_REPLICAS_HPP

#include <locksmith/config.hpp>
#include "sansio/scripts.hpp"

#include <boost/redis/resp3/tree.hpp>
#include <boost/redis/response.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace locksmith::detail {

/// How long WAIT waits in a node's calls: config::replica_timeout, or by default half the node
/// timeout, and never 0 ms (WAIT 0 would wait forever).
std::chrono::milliseconds effective_replica_timeout(config const& cfg) noexcept;

/// Whether a script's calls carry a WAIT when config::wait_replicas asks for one: the acquire
/// and extend scripts, whose writes a lease relies on; never the release script.
bool waits_for_replicas(script const& code) noexcept;

/// The replies of a request of several commands (ASKING, a script, WAIT), read into a tree that
/// keeps every node, errors included, as one response: the error of the first command whose
/// reply holds one, else the nodes of every reply but those of the first `skip` commands.
/// The first error wins because it comes from the command that decides: a replica answers a
/// script with MOVED and the WAIT behind it with an error of its own, and only the MOVED says
/// where to go (a generic_response would keep the last error only).
boost::redis::generic_response first_error_wins(boost::redis::resp3::tree const& replies,
                                                std::size_t skip = 0);

/// Takes the reply of the WAIT sent behind a script off the end of `r`, which is left with the
/// script's own reply, and returns the number of replicas WAIT reported. Empty, and `r` left as
/// it was, when `r` is an error or does not end with a top-level integer after another reply.
std::optional<std::int64_t> take_wait_reply(boost::redis::generic_response& r);

/// True when the script's reply grants what it was asked (the acquire script took the key, the
/// extend script extended it): only then must the write have reached the replicas.
bool granted(script const& code, boost::redis::generic_response const& r);

/// "WAIT: <acked> of <wanted> replicas acknowledged within <timeout> ms", for reports.
std::string replicas_message(std::int64_t acked, unsigned wanted,
                             std::chrono::milliseconds timeout);

}  // namespace locksmith::detail

#endif
