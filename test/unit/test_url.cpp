// Unit tests of parse_url and redacted (src/sansio/url.hpp).
#include "sansio/url.hpp"

#include <boost/test/unit_test.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace test_url {

namespace {

using namespace std::string_view_literals;
using namespace locksmith::detail;

void expect_rejected(std::initializer_list<std::string_view> urls)
{
   for (auto const bad : urls) {
      BOOST_TEST_CONTEXT("url \"" << bad << "\"")
      {
         BOOST_TEST(!parse_url(bad).has_value());
      }
   }
}

// The URL that `text` parses to; the test case stops (BOOST_TEST_REQUIRE) when it does not parse.
node_url parsed(std::string_view text)
{
   auto u = parse_url(text);
   BOOST_TEST_REQUIRE(u.has_value(), "url \"" << text << "\"");
   return *u;
}

// What a plain server's URL says, field by field.
struct plain_url {
   bool tls;
   std::string user, password, host, port;
   int database;
};

void check_plain(std::string_view text, plain_url const& want)
{
   auto const u = parsed(text);
   BOOST_TEST(u.tls == want.tls);
   BOOST_TEST(u.user == want.user);
   BOOST_TEST(u.password == want.password);
   BOOST_TEST(u.host == want.host);
   BOOST_TEST(u.port == want.port);
   BOOST_TEST(u.database == want.database);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(url)

BOOST_AUTO_TEST_CASE(host_only_takes_the_defaults)
{
   check_plain(
      "redis://host",
      {.tls = false, .user = "", .password = "", .host = "host", .port = "6379", .database = 0});
}

BOOST_AUTO_TEST_CASE(host_and_port)
{
   auto const u = parsed("redis://host:6380");
   BOOST_TEST(u.host == "host");
   BOOST_TEST(u.port == "6380");
   BOOST_TEST(u.database == 0);
   BOOST_TEST(parse_url("redis://host:1").value().port == "1");
   BOOST_TEST(parse_url("redis://host:65535").value().port == "65535");
}

BOOST_AUTO_TEST_CASE(user_password_port_and_database)
{
   check_plain("redis://user:pass@host:1/2", {.tls = false,
                                              .user = "user",
                                              .password = "pass",
                                              .host = "host",
                                              .port = "1",
                                              .database = 2});
   BOOST_TEST(parse_url("redis://host/2147483647").value().database == 2147483647);
}

BOOST_AUTO_TEST_CASE(password_without_user)
{
   auto const u = parsed("redis://:pass@host");
   BOOST_TEST(u.user == "");
   BOOST_TEST(u.password == "pass");
   BOOST_TEST(u.host == "host");
   BOOST_TEST(u.port == "6379");
}

BOOST_AUTO_TEST_CASE(user_without_password)
{
   auto const u = parsed("redis://user@host");
   BOOST_TEST(u.user == "user");
   BOOST_TEST(u.password == "");
}

BOOST_AUTO_TEST_CASE(rediss_is_tls)
{
   auto const u = parsed("rediss://user:pass@host:6380/3");
   BOOST_TEST(u.tls);
   BOOST_TEST(u.user == "user");
   BOOST_TEST(u.password == "pass");
   BOOST_TEST(u.host == "host");
   BOOST_TEST(u.port == "6380");
   BOOST_TEST(u.database == 3);
   BOOST_TEST(parse_url("rediss://host").value().tls);
}

BOOST_AUTO_TEST_CASE(ipv6_in_brackets)
{
   auto const u = parsed("redis://[::1]:6379");
   BOOST_TEST(u.host == "::1");
   BOOST_TEST(u.port == "6379");

   auto const v = parsed("redis://u:p@[fe80::1]:7000/4");
   BOOST_TEST(v.host == "fe80::1");
   BOOST_TEST(v.port == "7000");
   BOOST_TEST(v.database == 4);

   auto const w = parsed("redis://[::1]");
   BOOST_TEST(w.host == "::1");
   BOOST_TEST(w.port == "6379");
}

BOOST_AUTO_TEST_CASE(percent_encoded_credentials)
{
   auto const u = parsed("redis://us%3Aer:p%40ss@host");
   BOOST_TEST(u.user == "us:er");
   BOOST_TEST(u.password == "p@ss");
   BOOST_TEST(u.host == "host");

   BOOST_TEST(parse_url("redis://:p%40ss@host").value().password == "p@ss");
   BOOST_TEST(parse_url("redis://:%2f%2F@host").value().password == "//");
   // Decoded once only.
   BOOST_TEST(parse_url("redis://:pa%25ss@host").value().password == "pa%ss");
   // An escape at the very end.
   BOOST_TEST(parse_url("redis://:ab%40@host").value().password == "ab@");
   // Only the first ':' splits user from password.
   BOOST_TEST(parse_url("redis://:a:b@host").value().password == "a:b");
}

BOOST_AUTO_TEST_CASE(equal_urls_compare_equal)
{
   BOOST_TEST((parse_url("redis://host") == parse_url("redis://host:6379/0")));
   BOOST_TEST((parse_url("redis://host") != parse_url("rediss://host")));
}

BOOST_AUTO_TEST_CASE(rejects_malformed_urls)
{
   expect_rejected({
      "http://x"sv,
      "redis:/host"sv,
      "host:6379"sv,
      ""sv,
      "redis://"sv,
      "rediss://"sv,
      "redis://:6379"sv,
      "redis://user:pass@"sv,
      "redis://user:pass@:6379"sv,
      "redis://host:0"sv,
      "redis://host:65536"sv,
      "redis://host:99999999999"sv,
      "redis://host:abc"sv,
      "redis://host:-1"sv,
      "redis://host:+1"sv,
      "redis://host:12ab"sv,
      "redis://host:"sv,
      "redis://host/x"sv,
      "redis://host/-1"sv,
      "redis://host/1/2"sv,
      "redis://host/1x"sv,
      "redis://host/2147483648"sv,
      "redis://:p%zz@host"sv,
      "redis://:p%@host"sv,
      "redis://:p%4@host"sv,
      "redis://%zz@host"sv,
      "redis://[::1"sv,
      "redis://[::1:6379"sv,
      "redis://[]:6379"sv,
      "redis://[::1]:"sv,
      "redis://[::1]x"sv,
      "redis://::1:6379"sv,
      "redis://ho st"sv,
      "redis://host?db=1"sv,
   });
}

BOOST_AUTO_TEST_CASE(sentinel_url_takes_the_defaults)
{
   auto const u = parsed("redis+sentinel://s1/mymaster");
   BOOST_TEST(u.sentinel());
   BOOST_TEST(u.sentinels.size() == 1u);
   BOOST_TEST((u.sentinels.at(0) == endpoint{"s1", "26379"}));
   BOOST_TEST(u.master_name == "mymaster");
   BOOST_TEST(u.host.empty());
   BOOST_TEST(u.port.empty());
   BOOST_TEST(u.database == 0);
   BOOST_TEST(!u.tls);
   BOOST_TEST(u.user.empty());
   BOOST_TEST(!parse_url("redis://host").value().sentinel());
}

BOOST_AUTO_TEST_CASE(sentinel_url_with_everything)
{
   auto const u = parsed("redis+sentinel://us%3Aer:p%40ss@s1:1,[::1]:26380,s3/my.master-1/3");
   BOOST_TEST(u.user == "us:er");
   BOOST_TEST(u.password == "p@ss");
   BOOST_TEST(
      (u.sentinels == std::vector<endpoint>{{"s1", "1"}, {"::1", "26380"}, {"s3", "26379"}}));
   BOOST_TEST(u.master_name == "my.master-1");
   BOOST_TEST(u.database == 3);
}

BOOST_AUTO_TEST_CASE(rejects_malformed_sentinel_urls)
{
   expect_rejected({
      "redis+sentinel://s1"sv,  // no master name
      "redis+sentinel://s1/"sv,    "redis+sentinel://s1//1"sv,
      "redis+sentinel:///m"sv,  // no Sentinel
      "redis+sentinel://s1,/m"sv,  "redis+sentinel://,s1/m"sv,    "redis+sentinel://s1,,s2/m"sv,
      "redis+sentinel://s1:0/m"sv, "redis+sentinel://s1:/m"sv,    "redis+sentinel://s1:x/m"sv,
      "redis+sentinel://[::1/m"sv, "redis+sentinel://u:p@/m"sv,   "redis+sentinel://:p%zz@s1/m"sv,
      "redis+sentinel://s1/m/x"sv, "redis+sentinel://s1/m/1/2"sv, "redis+sentinel://s1/m?x=1"sv,
      "redis+sentinel://s1/m#x"sv, "redis+sentinel://s1/m x"sv,   "redis+sentinel://s1/m\x01"sv,
      "rediss+sentinel://s1/m"sv,  // TLS: no name to verify the master's certificate by
      "redis+Sentinel://s1/m"sv,   "sentinel://s1/m"sv,
   });
}

BOOST_AUTO_TEST_CASE(redacted_sentinel_url)
{
   auto const u = parsed("redis+sentinel://u:s3cr3t@s1,[::1]:26380/m/2");
   BOOST_TEST(redacted(u) == "redis+sentinel://u:***@s1:26379,[::1]:26380/m/2");
   BOOST_TEST(redacted(parse_url("redis+sentinel://s1/m").value()) ==
              "redis+sentinel://s1:26379/m");
}

BOOST_AUTO_TEST_CASE(cluster_url_takes_the_defaults)
{
   auto const u = parsed("redis+cluster://n1");
   BOOST_TEST(u.cluster());
   BOOST_TEST(!u.sentinel());
   BOOST_TEST(!u.tls);
   BOOST_TEST_REQUIRE(u.seeds.size() == 1u);
   BOOST_TEST((u.seeds[0] == endpoint{"n1", "6379"}));
   BOOST_TEST(u.host == "");
   BOOST_TEST(u.database == 0);
   BOOST_TEST(!parse_url("redis://host").value().cluster());
   BOOST_TEST(!parse_url("redis+sentinel://s1/m").value().cluster());
}

BOOST_AUTO_TEST_CASE(cluster_url_with_everything)
{
   auto const u = parsed("redis+cluster://us%3Aer:p%40ss@n1:7000,[::1]:7001,n3");
   BOOST_TEST(u.user == "us:er");
   BOOST_TEST(u.password == "p@ss");
   BOOST_TEST((u.seeds == std::vector<endpoint>{{"n1", "7000"}, {"::1", "7001"}, {"n3", "6379"}}));
}

BOOST_AUTO_TEST_CASE(rejects_malformed_cluster_urls)
{
   expect_rejected({
      "redis+cluster://"sv,         "redis+cluster://n1,"sv,  "redis+cluster://,n1"sv,
      "redis+cluster://n1,,n2"sv,   "redis+cluster://n1:0"sv, "redis+cluster://n1:"sv,
      "redis+cluster://n1:x"sv,     "redis+cluster://[::1"sv, "redis+cluster://u:p@"sv,
      "redis+cluster://:p%zz@n1"sv,
      "redis+cluster://n1/"sv,  // a cluster has database 0 only
      "redis+cluster://n1/0"sv,     "redis+cluster://n1/1"sv, "redis+cluster://n1?x=1"sv,
      "redis+cluster://n1#x"sv,     "redis+cluster://n 1"sv,
      "rediss+cluster://n1"sv,  // TLS: the slot map may name masters by IP address only
      "redis+Cluster://n1"sv,       "cluster://n1"sv,
   });
}

BOOST_AUTO_TEST_CASE(redacted_cluster_url)
{
   auto const u = parsed("redis+cluster://u:s3cr3t@n1,[::1]:7001");
   BOOST_TEST(redacted(u) == "redis+cluster://u:***@n1:6379,[::1]:7001");
}

BOOST_AUTO_TEST_CASE(redacted_hides_the_password)
{
   auto const u = parsed("redis://user:s3cr3t@host:6380/2");
   auto const r = redacted(u);
   BOOST_TEST(r.find("s3cr3t") == std::string::npos);
   BOOST_TEST(r == "redis://user:***@host:6380/2");

   auto const v = parsed("rediss://:p%40ss@host");
   auto const s = redacted(v);
   BOOST_TEST(s.find("p@ss") == std::string::npos);
   BOOST_TEST(s.find("p%40ss") == std::string::npos);
   BOOST_TEST(s == "rediss://:***@host:6379");
}

BOOST_AUTO_TEST_CASE(redacted_without_password)
{
   BOOST_TEST(redacted(parse_url("redis://host").value()) == "redis://host:6379");
   BOOST_TEST(redacted(parse_url("redis://user@host:1").value()) == "redis://user@host:1");
   BOOST_TEST(redacted(parse_url("redis://[::1]:7000/5").value()) == "redis://[::1]:7000/5");
}

// What redacted() prints parses back to the same node, minus the password.
BOOST_AUTO_TEST_CASE(redacted_round_trips_without_the_password)
{
   for (auto const url :
        {"redis://host"sv, "rediss://u@h:1/9"sv, "redis://[::1]:6380"sv, "redis://u:pw@h"sv,
         "redis://us%3Aer@h"sv, "redis://a%40b@h"sv, "redis+sentinel://u:pw@s1,[::1]:2/m@x,y/7"sv,
         "redis+cluster://u:pw@n1,[::1]:2"sv}) {
      BOOST_TEST_CONTEXT("url " << url)
      {
         auto u = parse_url(url);
         BOOST_TEST_REQUIRE(u.has_value());
         u->password.clear();
         auto const text = redacted(*u);
         auto const again = parse_url(text);
         BOOST_TEST_REQUIRE(again.has_value(), "redacted: " << text);
         BOOST_TEST((*again == *u), "redacted: " << text << ", parsed back as user \""
                                                 << again->user << "\", password \""
                                                 << again->password << "\"");
      }
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_url
