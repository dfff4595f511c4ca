// The version of the redis-server that the tests start (LOCKSMITH_REDIS_SERVER, else PATH), so
// that a test which needs a newer server than the one in use is skipped with the reason printed,
// instead of failing on a command the server does not know. scripts/test.sh --server NAME picks
// one of the matrix's servers (scripts/servers.sh).
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::test {

struct server_version {
   int major = 0;
   int minor = 0;
   int patch = 0;
   auto operator<=>(server_version const&) const = default;
};

/// What `redis-server --version` says ("Redis server v=6.0.16 ..." or "Valkey server v=8.1.1
/// ..."), read once; nothing when there is no server or its output does not parse. Valkey's own
/// numbering is kept: Valkey 7.2 and later have every command of Redis 7.0 that the tests use.
std::optional<server_version> redis_server_version();

/// "Redis 6.0.16" or "Valkey 8.1.1", or "an unknown server".
std::string redis_server_name();

/// ACL SETUSER's rule for the channels that match `pattern` ("&locksmith:*"), for a test's user;
/// none before Redis 6.2, which has no channel rules (every user may use every channel).
std::vector<std::string> acl_channels(std::string const& pattern);

/// The version "6.2.0" of a string such as "v=6.2.0 sha=..." or "6.2"; nothing when it has none.
std::optional<server_version> parse_server_version(std::string const& text);

}  // namespace locksmith::test
