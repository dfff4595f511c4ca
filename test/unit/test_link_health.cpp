// Unit tests of link_health (src/sansio/link_health.hpp): what a connection's log
// lines (Boost.Redis 1.92's wording) and TLS callbacks say about why it cannot serve.
#include "sansio/link_health.hpp"

#include "support/print.hpp"

#include <boost/test/unit_test.hpp>

namespace test_link_health {

using locksmith::error;
using locksmith::detail::is_auth_error;
using locksmith::detail::link_health;

namespace {

constexpr char const* trying = "Trying to connect to Redis server at 127.0.0.1:6379 (TLS enabled)";
constexpr char const* connected = "Connected to Redis server at 127.0.0.1:6379 (TLS enabled)";
constexpr char const* setup_ok = "Setup request execution: success";
constexpr char const* wrongpass =
   "Setup request execution failed: WRONGPASS invalid username-password pair or user is disabled.";
constexpr char const* refused =
   "Failed to connect to Redis server at 127.0.0.1:6379 (TLS disabled): Connection refused";
constexpr char const* handshake_failed =
   "Failed to connect to Redis server at 127.0.0.1:6379 (TLS enabled): certificate verify failed";
constexpr char const* read_failed =
   "Error reading data from the server: tlsv13 alert certificate required";

}  // namespace

BOOST_AUTO_TEST_SUITE(link_health_suite)

BOOST_AUTO_TEST_CASE(auth_errors_are_told_by_their_code)
{
   BOOST_TEST(is_auth_error("WRONGPASS invalid username-password pair"));
   BOOST_TEST(is_auth_error("NOPERM User u has no permissions to run the 'evalsha' command"));
   BOOST_TEST(is_auth_error("NOAUTH Authentication required."));
   BOOST_TEST(!is_auth_error("ERR unknown command"));
   BOOST_TEST(!is_auth_error("NOSCRIPT No matching script."));
   BOOST_TEST(!is_auth_error(""));
}

BOOST_AUTO_TEST_CASE(a_refused_password_lasts_until_a_setup_succeeds)
{
   link_health h;
   h.on_log(false, trying);
   h.on_log(false, connected);
   h.on_log(true, wrongpass);
   BOOST_TEST(h.lasting() == error::auth_failed);
   BOOST_TEST(h.lasting_message().starts_with("WRONGPASS"));
   BOOST_TEST(h.last_problem() == wrongpass);
   // The next attempt starts: still refused until it says otherwise.
   h.on_log(false, trying);
   BOOST_TEST(h.lasting() == error::auth_failed);
   h.on_log(false, connected);
   h.on_log(false, setup_ok);
   BOOST_TEST(!h.lasting());
}

BOOST_AUTO_TEST_CASE(a_failed_handshake_lasts_but_a_refused_connection_is_no_tls_problem)
{
   link_health h;
   h.on_log(false, trying);
   h.on_tls_problem("certificate verify failed: hostname mismatch");
   h.on_tls_problem("we sent the alert 'bad certificate'");  // a consequence: not kept
   BOOST_TEST(h.lasting() == error::tls_failed);
   BOOST_TEST(h.lasting_message() == "TLS: certificate verify failed: hostname mismatch");
   h.on_log(true, handshake_failed);
   BOOST_TEST(h.lasting() == error::tls_failed);
   // The server went away: now it is down, not refusing us.
   h.on_log(false, trying);
   h.on_log(true, refused);
   BOOST_TEST(!h.lasting());
   BOOST_TEST(h.last_problem() == refused);
}

BOOST_AUTO_TEST_CASE(an_alert_after_the_handshake_is_a_tls_failure)
{
   // TLS 1.3: the server refuses our (missing) certificate after the handshake completed.
   link_health h;
   h.on_log(false, trying);
   h.on_log(false, connected);
   h.on_tls_problem("the server sent the alert 'certificate required'");
   h.on_log(true, read_failed);
   BOOST_TEST(h.lasting() == error::tls_failed);
   BOOST_TEST(h.lasting_message().find("certificate required") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_that_cannot_be_loaded_lasts_for_good)
{
   link_health h;
   h.on_tls_config_problem("cannot load the CA file 'x.pem': No such file or directory");
   h.on_log(false, trying);
   h.on_tls_problem("certificate verify failed: unable to get local issuer certificate");
   h.on_log(true, handshake_failed);
   h.on_log(false, trying);
   h.on_log(true, refused);
   BOOST_TEST(h.lasting() == error::tls_failed);
   BOOST_TEST(h.lasting_message() ==
              "TLS: cannot load the CA file 'x.pem': No such file or directory");
}

BOOST_AUTO_TEST_CASE(an_ordinary_drop_changes_nothing)
{
   link_health h;
   h.on_log(false, trying);
   h.on_log(false, setup_ok);
   h.on_log(true, "Error reading data from the server: End of file");
   BOOST_TEST(!h.lasting());
   BOOST_TEST(h.last_problem() == "Error reading data from the server: End of file");
}

// A Sentinel node compares the server its connection reached with the one the Sentinels name.
BOOST_AUTO_TEST_CASE(the_server_reached_and_the_connections_made_are_counted)
{
   link_health h;
   BOOST_TEST(h.server().empty());
   BOOST_TEST(h.connections() == 0u);
   h.on_log(false, trying);
   h.on_log(true, refused);
   BOOST_TEST(h.connections() == 0u);
   h.on_log(false, connected);
   BOOST_TEST(h.server() == "127.0.0.1:6379");
   BOOST_TEST(h.connections() == 1u);
   h.on_log(false, "Connected to Redis server at 127.0.0.1:6380 (TLS disabled)");
   BOOST_TEST(h.server() == "127.0.0.1:6380");
   BOOST_TEST(h.connections() == 2u);
}

// A Redis Cluster node holds calls for a master whose connection is down (cluster_node).
BOOST_AUTO_TEST_CASE(a_link_is_up_from_a_connection_until_it_fails)
{
   link_health h;
   BOOST_TEST(!h.up());
   h.on_log(false, trying);
   BOOST_TEST(!h.up());
   h.on_log(false, connected);
   BOOST_TEST(h.up());
   h.on_log(false, setup_ok);
   BOOST_TEST(h.up());
   h.on_log(true, "Error reading data from the server: End of file [asio.misc:2]");
   BOOST_TEST(!h.up());
   h.on_log(false, trying);
   h.on_log(true, refused);
   BOOST_TEST(!h.up());
   h.on_log(false, trying);
   h.on_log(false, connected);
   BOOST_TEST(h.up());
   h.on_log(true, "Error writing data to the server: Broken pipe");
   BOOST_TEST(!h.up());
}

// A server's error to the health check (a loading server's LOADING) is the cause of the
// connection's end, until the next attempt; the lines that follow it do not hide it.
BOOST_AUTO_TEST_CASE(a_refused_ping_is_kept_until_the_next_attempt)
{
   link_health h;
   h.on_log(false, trying);
   h.on_log(false, connected);
   BOOST_TEST(h.refused_ping().empty());
   h.on_log(true, "Health checker: server answered ping with an error: LOADING Redis is loading");
   h.on_log(true, "Error processing message: Got RESP3 simple-error.");
   h.on_log(true, "Error reading data from the server: Operation canceled");
   BOOST_TEST(h.refused_ping() == "LOADING Redis is loading");
   BOOST_TEST(h.last_problem().ends_with("LOADING Redis is loading"));
   BOOST_TEST(!h.lasting());  // a passing state of the server, not of our setup
   h.on_log(false, trying);
   BOOST_TEST(h.refused_ping().empty());
   // Still the last problem, for the calls that time out while the connection is made again,
   // until this attempt has one of its own.
   BOOST_TEST(h.last_problem().ends_with("LOADING Redis is loading"));
   h.on_log(true, refused);
   BOOST_TEST(h.last_problem() == refused);
}

// Only the lines of the connection's end are the refusal's consequences: another problem before
// the next attempt (a Sentinel that cannot name the master) is the last one.
BOOST_AUTO_TEST_CASE(a_refused_ping_does_not_hide_other_problems)
{
   link_health h;
   h.on_log(true, "Health checker: server answered ping with an error: LOADING Redis is loading");
   constexpr char const* resolve_failed = "Failed to resolve the address of master mymaster";
   h.on_log(true, resolve_failed);
   BOOST_TEST(h.last_problem() == resolve_failed);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_link_health
