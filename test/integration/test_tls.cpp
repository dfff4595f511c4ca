// TLS against a real redis-server with --tls-port, with certificates the tests make with openssl:
// verified by default, by chain and by host name; mutual TLS; a failed handshake ends the
// operation at once with the node and the reason, not after the wait.
#include "support/integration.hpp"
#include "support/tls_certs.hpp"

namespace test_tls {

using locksmith::test::test_certs;

namespace {

// A redis-server with a TLS listener, and the io_context of the test's client. By default its
// certificate is the one the test CA signed for localhost and 127.0.0.1.
struct tls_server : locksmith::test::tls_redis_server {
   using tls_redis_server::tls_redis_server;
   tls_server()
       : tls_redis_server{test_certs().server_cert, test_certs().server_key}
   {}
   asio::io_context ioc;
};

struct outcome {
   error_code ec;
   locksmith::report diag;
   clock_type::duration took{};
};

// Locks and unlocks `name` once, with a long wait: a TLS failure must end it long before.
outcome lock_and_unlock(tls_server& s, locksmith::config cfg, std::string const& name)
{
   outcome o;
   run(s.ioc, 30s, [&]() -> asio::awaitable<void> {
      locksmith::client c{s.ioc.get_executor(), std::move(cfg)};
      auto const t0 = clock_type::now();
      auto [ec, l] = co_await c.async_lock(name, {.ttl = 10s, .wait = 20s, .diag = &o.diag}, tuple);
      o.took = clock_type::now() - t0;
      o.ec = ec;
      if (!ec) {
         BOOST_TEST(s.srv.text({"EXISTS", lock_key(name)}) == "1");
         auto [uec] = co_await c.async_unlock(l, tuple);
         BOOST_TEST(!uec, uec.message());
      }
   }());
   locksmith::test::expect_no_work_left(s.ioc);
   return o;
}

locksmith::config tls_config(std::string url, std::string const& ca)
{
   locksmith::config cfg{.nodes = {std::move(url)}};
   cfg.tls.ca_file = ca;
   return cfg;
}

// Failed at once (the wait is 20 s), with tls_failed, naming the node and the reason.
void check_refused(outcome const& o, std::string const& node, std::string const& reason)
{
   BOOST_TEST(o.ec == error::tls_failed, o.ec.message());
   BOOST_TEST(o.took < 5s);
   auto const m = o.diag.message();
   BOOST_TEST_MESSAGE("report: " << m);
   BOOST_TEST(m.find(node) != std::string::npos, m);
   BOOST_TEST(m.find(reason) != std::string::npos, m);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tls, *needs_redis_server())

BOOST_AUTO_TEST_CASE(lock_and_unlock_over_verified_tls)
{
   auto const& certs = test_certs();
   tls_server s;
   // By DNS name (checked against the certificate's DNS name, and sent as SNI) and by address.
   for (auto const* host : {"localhost", "127.0.0.1"}) {
      auto const o = lock_and_unlock(s, tls_config(s.url(host), certs.ca), unique_key(host));
      BOOST_TEST(!o.ec, host << ": " << o.ec.message() << " " << o.diag.message());
   }
}

BOOST_AUTO_TEST_CASE(an_untrusted_ca_fails_at_once)
{
   auto const& certs = test_certs();
   tls_server s;
   auto const o = lock_and_unlock(s, tls_config(s.url(), certs.other_ca), unique_key());
   check_refused(o, s.url(), "certificate verify failed");
   BOOST_TEST(s.srv.text({"DBSIZE"}) == "0");
}

BOOST_AUTO_TEST_CASE(the_system_store_does_not_trust_a_private_ca)
{
   tls_server s;
   auto const o = lock_and_unlock(s, tls_config(s.url(), ""), unique_key());
   check_refused(o, s.url(), "certificate verify failed");
}

BOOST_AUTO_TEST_CASE(a_certificate_for_another_host_fails)
{
   auto const& certs = test_certs();
   tls_server s{certs.wrong_host_cert, certs.wrong_host_key};
   auto const by_name = lock_and_unlock(s, tls_config(s.url("localhost"), certs.ca), unique_key());
   check_refused(by_name, s.url("localhost"), "hostname mismatch");
   auto const by_ip = lock_and_unlock(s, tls_config(s.url("127.0.0.1"), certs.ca), unique_key());
   check_refused(by_ip, s.url("127.0.0.1"), "IP address mismatch");
}

BOOST_AUTO_TEST_CASE(insecure_skip_verify_accepts_any_certificate)
{
   auto const& certs = test_certs();
   tls_server s{certs.wrong_host_cert, certs.wrong_host_key};
   auto cfg = tls_config(s.url(), certs.other_ca);
   cfg.tls.insecure_skip_verify = true;
   auto const o = lock_and_unlock(s, std::move(cfg), unique_key());
   BOOST_TEST(!o.ec, o.ec.message() << " " << o.diag.message());
}

BOOST_AUTO_TEST_CASE(mutual_tls_works_with_the_client_certificate)
{
   auto const& certs = test_certs();
   tls_server s{certs.server_cert, certs.server_key, true};
   auto cfg = tls_config(s.url(), certs.ca);
   cfg.tls.cert_file = certs.client_cert;
   cfg.tls.key_file = certs.client_key;
   auto const o = lock_and_unlock(s, std::move(cfg), unique_key());
   BOOST_TEST(!o.ec, o.ec.message() << " " << o.diag.message());
}

BOOST_AUTO_TEST_CASE(mutual_tls_fails_without_the_client_certificate)
{
   auto const& certs = test_certs();
   tls_server s{certs.server_cert, certs.server_key, true};
   auto const o = lock_and_unlock(s, tls_config(s.url(), certs.ca), unique_key());
   // Under TLS 1.3 the server says so after the handshake, with an alert.
   check_refused(o, s.url(), "the server sent the alert 'certificate required'");
}

BOOST_AUTO_TEST_CASE(a_missing_ca_file_is_named)
{
   tls_server s;
   auto const o = lock_and_unlock(s, tls_config(s.url(), "/nonexistent/ca.pem"), unique_key());
   check_refused(o, s.url(), "/nonexistent/ca.pem");
}

BOOST_AUTO_TEST_CASE(a_certificate_without_its_key_is_invalid)
{
   locksmith::config cfg{.nodes = {"rediss://localhost:6380"}};
   cfg.tls.cert_file = "client.crt";
   asio::io_context ioc;
   locksmith::client c{ioc.get_executor(), cfg};
   BOOST_TEST(c.config_error() == error::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_tls
