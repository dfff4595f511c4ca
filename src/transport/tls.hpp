// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The TLS context of a connection to a node: verification, SNI, client certificate.
#ifndef LOCKSMITH_SRC_TLS_HPP
#define LOCKSMITH_SRC_TLS_HPP

#include <locksmith/config.hpp>
#include "sansio/link_health.hpp"
#include "sansio/url.hpp"

#include <boost/asio/ssl/context.hpp>

#include <memory>

namespace locksmith::detail {

/// The TLS context of one connection to `url`. Each connection needs its own: Boost.Redis takes
/// it by value.
///
/// For a `rediss://` node: TLS 1.2 or later; the server's chain verified against tls.ca_file or
/// the system's store, and its name against the URL's host (a DNS name, or an IP address that the
/// certificate must list); SNI sent for a DNS name (never for an address, as RFC 6066 says); the
/// client certificate presented when one is given. Unless tls.insecure_skip_verify.
///
/// What goes wrong goes to `health`: a file that cannot be loaded at once, and during each
/// handshake the verification's reason or the fatal alert either side sent.
boost::asio::ssl::context make_tls_context(node_url const& url, tls_options const& tls,
                                           std::shared_ptr<link_health> const& health);

}  // namespace locksmith::detail

#endif
