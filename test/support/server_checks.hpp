// Tests that need a newer server than the oldest supported one (see the README's "Supported
// servers"): Boost.Test preconditions and a runtime check that skip them on an older server, with
// the reason printed. The server is the one the tests start (scripts/test.sh --server NAME).
#pragma once

#include <boost/test/unit_test.hpp>

#include <string>

namespace locksmith::test {

/// The decorator of a test or suite that needs Redis major.minor or later, e.g.
/// `*needs_server_version(7, 0, "Redis Cluster: SPUBLISH")`: on an older server it is skipped,
/// and the log says which server this is and what it lacks.
boost::unit_test::precondition needs_server_version(int major, int minor, std::string what);

/// The decorator of the Redis Cluster suites: Redis 7.0, whose sharded pub/sub (SPUBLISH) carries a
/// cluster's releases. The client refuses an older cluster (test_server_versions.cpp).
boost::unit_test::precondition needs_cluster_server();

/// The same check inside a test, for a part of it: prints why and returns true when the server
/// is older than major.minor (the test then returns).
bool server_older_than(int major, int minor, std::string const& what);

}  // namespace locksmith::test
