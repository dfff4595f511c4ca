// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_VALIDATE_HPP
#define LOCKSMITH_DETAIL_VALIDATE_HPP

#include <locksmith/config.hpp>
#include <locksmith/error.hpp>
#include <locksmith/lock_options.hpp>

#include <optional>
#include <string_view>

namespace locksmith::detail {

/// error::invalid_argument for an empty or oversized name, or one that begins with '}' (it
/// would end the `{name}` hash tag at once); success otherwise.
error_code validate_name(std::string_view name) noexcept;

/// error::invalid_argument for a TTL outside [min_ttl, max_ttl].
error_code validate_ttl(std::chrono::milliseconds ttl) noexcept;

/// error::invalid_argument for a negative drift, or one (given, or the default for the TTL)
/// that is not below the TTL: no validity could ever be left.
error_code validate_drift(std::chrono::milliseconds ttl,
                          std::optional<std::chrono::milliseconds> drift) noexcept;

/// What the watchdog's schedule leaves a renewed lease to spare, before any loss margin:
/// ttl - ttl/3 - drift - 2 × node_timeout (ttl/3 in whole ms; drift given, or the default for the
/// TTL). The first renewal starts at ttl/3 and must answer, within one node timeout, before the
/// loss at valid_until - node_timeout - loss_margin, where valid_until = ttl - drift: so renewal
/// has room only when loss_margin is below this. See lock_options::renew.
std::chrono::milliseconds renewal_room(std::chrono::milliseconds ttl,
                                       std::optional<std::chrono::milliseconds> drift,
                                       std::chrono::milliseconds node_timeout) noexcept;

/// error::invalid_argument for a holder label longer than max_owner_size or with an ASCII
/// control character (a newline would forge a line of `locksmith status`); success otherwise,
/// the empty label (none) included.
error_code validate_owner(std::string_view owner) noexcept;

/// The name, the TTL, the owner label, the drift, a negative wait, a max_hold given but not
/// positive, a negative loss margin or one not below the TTL, a drift not below the TTL, a spin
/// interval that is not positive or a negative jitter, and, with renew, a TTL that leaves no room
/// to renew (loss_margin not below renewal_room(ttl, drift, node_timeout), the client's node
/// timeout).
error_code validate_options(std::string_view name, lock_options const& opts,
                            std::chrono::milliseconds node_timeout) noexcept;

/// No nodes, a malformed URL, a prefix with a brace, a node timeout that is not positive, a
/// replica timeout that is not positive or not below the node timeout, or a TLS client
/// certificate without its key (or a key without its certificate).
error_code validate_config(config const& cfg);

}  // namespace locksmith::detail

#endif
