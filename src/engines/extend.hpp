// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Extending a held lease, for its holder and for its watchdog.
#ifndef LOCKSMITH_SRC_EXTEND_HPP
#define LOCKSMITH_SRC_EXTEND_HPP

#include "engines/client_context.hpp"
#include "protocol/fanout.hpp"
#include "engines/lease_state.hpp"

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

/// What an extension of the lease to `ttl`, started at `t0`, means once its fan-out `r` is
/// decided: moves the lease's validity when a quorum extended it in time, else the error, as
/// extend_lease gives it. Shared by extend_lease and the watchdog's batched renewals.
error_code settle_extension(lease_state& st, fanout_result const& r,
                            lease_state::clock::time_point t0, std::chrono::milliseconds ttl);

}  // namespace locksmith::detail

#endif
