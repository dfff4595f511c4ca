// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Mutual exclusion under the shape that once broke it (issue 16, see support/contention.hpp):
// 4 clients x 8 coroutines x 4 names, on 1 and on 5 nodes, for both strategies, with at least
// 20,000 cycles per run and no fault injected, so that every error counts; and the lock without
// a fence (issue 27) on both.
#include "support/contention_checks.hpp"
#include "support/fixture.hpp"
#include "support/redis_server.hpp"

#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

namespace test_mutual_exclusion {

namespace {
using locksmith::test::contention_shape;

void contend_on(std::size_t n, contention_shape s, char const* what)
{
   locksmith::test::servers_fixture f;
   f.start(n);
   locksmith::test::check_contention(
      locksmith::test::run_contention(locksmith::test::urls_of(f.servers), s), s, what);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mutual_exclusion, *locksmith::test::needs_redis_server())

BOOST_AUTO_TEST_CASE(one_node_subscribe)
{
   contend_on(1, {}, "1 node, subscribe");
}
BOOST_AUTO_TEST_CASE(one_node_spin)
{
   contend_on(1, {.spin = true}, "1 node, spin 2 ms");
}
BOOST_AUTO_TEST_CASE(five_nodes_subscribe)
{
   contend_on(5, {}, "5 nodes, subscribe");
}
BOOST_AUTO_TEST_CASE(five_nodes_spin)
{
   contend_on(5, {.spin = true}, "5 nodes, spin 2 ms");
}

// The lock without a fence (lock_options::fence = false): a plain SET NX, the same releases.
BOOST_AUTO_TEST_CASE(one_node_unfenced)
{
   contend_on(1, {.fence = false}, "1 node, subscribe, unfenced");
}
BOOST_AUTO_TEST_CASE(five_nodes_unfenced)
{
   contend_on(5, {.fence = false}, "5 nodes, subscribe, unfenced");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_mutual_exclusion
