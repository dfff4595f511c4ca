// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Extending a held lease, for its holder and for its watchdog.
#ifndef LOCKSMITH_SRC_EXTEND_HPP
#define LOCKSMITH_SRC_EXTEND_HPP

#include "client_context.hpp"
#include "lease_state.hpp"

#include <locksmith/report.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>

namespace locksmith::detail {

/// Sets the lease's key (and its fence key) to expire `ttl` from now on a quorum, if it is still
/// ours, and moves valid_until. invalid_argument for a bad ttl; not_held unless the lease is
/// held; not_owner or lease_expired when the key is someone else's or gone on enough nodes;
/// lease_expired when the quorum answered after the old validity ended.
boost::asio::awaitable<error_code> extend_lease(client_context& ctx,
                                                std::shared_ptr<lease_state> st,
                                                std::chrono::milliseconds ttl, report* diag);

}  // namespace locksmith::detail

#endif
