// The `locksmith exec` command-line tool, run as a process against real redis-servers: TLS and ACL
// users on the command line.
#include "cli.hpp"
#include "support/server_version.hpp"
#include "support/tls_certs.hpp"

namespace test_cli_security {

using locksmith::test::tls_redis_server;

auto const& certs()
{
   return locksmith::test::test_certs();
}

// TLS and ACL users on the command line: the node and the reason on one line, exit 69 for TLS
// and 77 for refused credentials, and the password nowhere.
BOOST_AUTO_TEST_SUITE(cli_security, *needs_redis_server())

namespace {

std::vector<std::string> tls_exec(const tls_redis_server& r, const std::string& key,
                                  std::vector<std::string> options)
{
   std::vector<std::string> args{"exec", "--redis", r.url(), "--key", key, "--wait", "20s"};
   args.insert(args.end(), options.begin(), options.end());
   args.insert(args.end(), {"--", "true"});
   return args;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tls_with_the_ca_runs_the_command, *utf::timeout(60))
{
   tls_redis_server r{certs().server_cert, certs().server_key};
   cli_process p(tls_exec(r, unique_key(), {"--tls-ca", certs().ca}));
   BOOST_TEST(p.wait() == 0, p.err());
}

BOOST_AUTO_TEST_CASE(an_untrusted_server_exits_69_at_once_naming_node_and_reason, *utf::timeout(60))
{
   tls_redis_server r{certs().server_cert, certs().server_key};
   auto t0 = clock_type::now();
   cli_process p(tls_exec(r, unique_key(), {"--tls-ca", certs().other_ca}));
   BOOST_TEST(p.wait() == 69, p.err());
   BOOST_TEST(ms_since(t0) < 5000);  // the wait is 20 s
   auto const err = p.err();
   BOOST_TEST(count_lines(err) == 1, err);
   BOOST_TEST(err.find(r.url()) != std::string::npos, err);
   BOOST_TEST(err.find("certificate verify failed") != std::string::npos, err);
}

BOOST_AUTO_TEST_CASE(mutual_tls_needs_both_cert_options, *utf::timeout(60))
{
   tls_redis_server r{certs().server_cert, certs().server_key, true};
   auto const& certs = locksmith::test::test_certs();
   cli_process with(tls_exec(
      r, unique_key(),
      {"--tls-ca", certs.ca, "--tls-cert", certs.client_cert, "--tls-key", certs.client_key}));
   BOOST_TEST(with.wait() == 0, with.err());
   cli_process without(tls_exec(r, unique_key(), {"--tls-ca", certs.ca}));
   BOOST_TEST(without.wait() == 69, without.err());
   cli_process half(tls_exec(r, unique_key(), {"--tls-cert", certs.client_cert}));
   BOOST_TEST(half.wait() == 64, half.err());
   BOOST_TEST(half.err().find("--tls-key") != std::string::npos, half.err());
}

BOOST_AUTO_TEST_CASE(a_wrong_password_exits_77_and_never_shows_it, *utf::timeout(60))
{
   redis_server srv;
   std::vector<std::string> user{"ACL", "SETUSER", "locker", "on", ">right-pass", "~*", "+@all"};
   for (auto const& rule : locksmith::test::acl_channels("*"))
      user.push_back(rule);
   BOOST_TEST_REQUIRE(srv.command(user).str == "OK");
   auto t0 = clock_type::now();
   std::string const url = "redis://locker:Wr0ng-Pa55@127.0.0.1:" + std::to_string(srv.port());
   cli_process p({"exec", "--redis", url, "--key", unique_key(), "--wait", "20s", "--", "true"});
   BOOST_TEST(p.wait() == 77, p.err());
   BOOST_TEST(ms_since(t0) < 5000);
   auto const err = p.err();
   BOOST_TEST(count_lines(err) == 1, err);
   BOOST_TEST(err.find("WRONGPASS") != std::string::npos, err);
   BOOST_TEST(err.find("redis://locker:***@127.0.0.1") != std::string::npos, err);
   BOOST_TEST(err.find("Wr0ng-Pa55") == std::string::npos, err);
}

BOOST_AUTO_TEST_CASE(help_lists_the_tls_options_and_exit_77, *utf::timeout(60))
{
   cli_process help({"exec", "--help"});
   BOOST_TEST(help.wait() == 0);
   // 77 covers a command denied inside a script, which Redis does not report as NOPERM.
   for (auto const* text :
        {"--tls-ca", "--tls-cert", "--tls-key", "77", "WRONGPASS", "can't run this command"})
      BOOST_TEST(help.out().find(text) != std::string::npos, text << " not in --help");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_security
