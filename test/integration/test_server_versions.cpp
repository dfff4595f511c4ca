// What each supported server version can serve, against the server under test (scripts/test.sh
// --server NAME): a Redis Cluster of Redis 6 (no sharded pub/sub) is refused when the client
// connects, with error::invalid_argument naming the master and what it lacks, instead of a lock
// whose release fails later. Run only on a server older than 7.0 (scripts/test.sh --server
// redis-6.0); skipped with the reason on the others, whose clusters the cluster suites test.
#include "support/cluster_group.hpp"
#include "support/integration.hpp"
#include "support/server_version.hpp"

namespace test_server_versions {

namespace {

using locksmith::test::cluster_group;

boost::unit_test::precondition needs_a_server_older_than_7()
{
   return boost::unit_test::precondition{
      [below = locksmith::test::server_version{7, 0, 0}](boost::unit_test::test_unit_id) {
         auto const v = locksmith::test::redis_server_version();
         bool const old = v && *v < below;
         boost::test_tools::assertion_result r{old};
         r.message() << "needs a Redis older than 7.0 (scripts/test.sh --server redis-6.0); the "
                        "server is "
                     << locksmith::test::redis_server_name();
         return r;
      }};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(server_versions, *needs_redis_server())

BOOST_AUTO_TEST_CASE(a_redis_6_cluster_is_refused_when_the_client_connects,
                     *needs_a_server_older_than_7())
{
   cluster_group cluster{3};
   asio::io_context ioc;
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 1s)};
   auto const name = unique_key();
   std::vector<error_code> errors;
   std::vector<std::string> messages;
   clock_type::duration took{};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      // Twice: the first call may have been sent before the check's answer, the second one
      // is refused without being sent. Neither may wait out its `wait`.
      for (int i = 0; i < 2; ++i) {
         locksmith::report diag;
         auto const start = clock_type::now();
         auto [ec, l] =
            co_await c.async_lock(name, {.ttl = 10s, .wait = 20s, .diag = &diag}, tuple);
         took = std::max(took, clock_type::now() - start);
         errors.push_back(ec);
         messages.push_back(diag.message());
      }
      // A release of the first call's key (which it may have set) is refused too, so the
      // close may give it up after config::close_timeout; the key then expires by its TTL.
      auto [closed] = co_await c.async_close(tuple);
      BOOST_TEST_MESSAGE("close: " << closed.message());
      BOOST_TEST((!closed || closed == asio::error::timed_out), closed.message());
   }());
   BOOST_TEST_REQUIRE(errors.size() == 2u);
   for (std::size_t i = 0; i < errors.size(); ++i) {
      BOOST_TEST(errors[i] == error::invalid_argument, errors[i].message());
      BOOST_TEST_MESSAGE("report: " << messages[i]);
      BOOST_TEST(messages[i].find("SPUBLISH") != std::string::npos, messages[i]);
      BOOST_TEST(messages[i].find("Redis 7.0") != std::string::npos, messages[i]);
      // The master that refused, by its address.
      BOOST_TEST(messages[i].find("redis://127.0.0.1:") != std::string::npos, messages[i]);
   }
   BOOST_TEST(took < 10s, to_ms(took) << " ms: a refusal must not wait out the wait");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_server_versions
