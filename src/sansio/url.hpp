// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_URL_HPP
#define LOCKSMITH_DETAIL_URL_HPP

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// A host (without brackets for IPv6) and a port.
struct endpoint {
   std::string host;
   std::string port;

   friend bool operator==(endpoint const&, endpoint const&) = default;
};

/// A parsed node address: a Redis server, or a master that Sentinels name.
struct node_url {
   bool tls = false;
   std::string user;           // empty: none given
   std::string password;       // empty: none given
   std::string host;           // without brackets for IPv6; empty for a Sentinel-managed master
   std::string port = "6379";  // empty for a Sentinel-managed master
   int database = 0;
   std::vector<endpoint> sentinels;  // the Sentinels to ask, in order; empty for a plain server
   std::string master_name;          // the master's name at those Sentinels
   std::vector<endpoint> seeds;  // a Redis Cluster's nodes to learn its slot map from; else empty

   /// True for a master found through Sentinels (`redis+sentinel://`).
   bool sentinel() const noexcept { return !sentinels.empty(); }
   /// True for a Redis Cluster (`redis+cluster://`), which counts as one node.
   bool cluster() const noexcept { return !seeds.empty(); }

   friend bool operator==(node_url const&, node_url const&) = default;
};

/// The Sentinel port taken when a `redis+sentinel://` URL gives none.
inline constexpr std::string_view default_sentinel_port = "26379";

/// Parses `redis://[user[:password]@]host[:port][/db]` or `rediss://...` (TLS). User and password
/// may be percent-encoded; an IPv6 host is written in brackets. Empty when malformed: another
/// scheme, an empty host, a port that is not a number in 1..65535, a database that is not a
/// number in 0..2^31-1, a bad percent escape, or anything after the database.
///
/// Also parses a master that Sentinels manage:
/// `redis+sentinel://[user[:password]@]host[:port][,host[:port]]/master[/db]`, where the
/// hosts are Sentinels (port 26379 by default), `master` the name they monitor it by, and the
/// user and password those of the master (the Sentinels are asked without). The master name is
/// required and is printable ASCII without `/`, `?` or `#`. `rediss+sentinel://` (TLS) is
/// refused: the master's address comes from the Sentinels, so there is no name to verify its
/// certificate against.
///
/// And a Redis Cluster: `redis+cluster://[user[:password]@]host[:port][,host[:port]]...`, where
/// the hosts are any of its nodes (port 6379 by default), asked for the slot map in turn, and the
/// user and password those of every node. Nothing may follow the hosts: a cluster has only
/// database 0. `rediss+cluster://` (TLS) is refused: the masters' addresses come from the slot
/// map, which may name them by IP address only.
std::optional<node_url> parse_url(std::string_view url);

/// The URL again, without the password (for reports and messages). Ports are always shown.
std::string redacted(node_url const& u);

}  // namespace locksmith::detail

#endif
