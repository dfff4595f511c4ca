// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_URL_HPP
#define LOCKSMITH_DETAIL_URL_HPP

#include <optional>
#include <string>
#include <string_view>

namespace locksmith::detail {

/// A parsed node address.
struct node_url {
   bool tls = false;
   std::string user;      // empty: none given
   std::string password;  // empty: none given
   std::string host;      // without brackets for IPv6
   std::string port = "6379";
   int database = 0;

   friend bool operator==(node_url const&, node_url const&) = default;
};

/// Parses `redis://[user[:password]@]host[:port][/db]` or `rediss://...` (TLS). User and password
/// may be percent-encoded; an IPv6 host is written in brackets. Empty when malformed: another
/// scheme, an empty host, a port that is not a number in 1..65535, a database that is not a
/// number in 0..2^31-1, a bad percent escape, or anything after the database.
std::optional<node_url> parse_url(std::string_view url);

/// The URL again, without the password (for reports and messages).
std::string redacted(node_url const& u);

}  // namespace locksmith::detail

#endif
