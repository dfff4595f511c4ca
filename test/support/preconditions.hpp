// What the integration suites need from the machine, as Boost.Test preconditions: a suite whose
// precondition fails is skipped, and the log says why.
#pragma once

#include <boost/test/unit_test.hpp>

namespace locksmith::test {

/// The decorator of every integration suite, `*needs_redis_server()`: without redis-server in
/// PATH the suite is skipped, instead of each of its tests failing to start one.
boost::unit_test::precondition needs_redis_server();

}  // namespace locksmith::test
