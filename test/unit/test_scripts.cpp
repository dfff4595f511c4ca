// Unit tests of the Lua scripts' SHAs and twins, and of the parsers of their replies
// (src/sansio/scripts.hpp), over hand-built RESP3 replies. What the scripts do is
// the script table's (test_script_table.cpp).
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"

#include "support/resp_reply.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>

#include <source_location>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

namespace test_scripts {

namespace {

using namespace locksmith::test::resp_names;
using locksmith::detail::acquire_reply;
using locksmith::detail::ownership;

generic_response server_error_reply(std::string diagnostic, type t = type::simple_error)
{
   generic_response r;
   r = boost::redis::adapter::error{t, std::move(diagnostic)};
   return r;
}

// The acquire script's `{flag, value}`.
generic_response pair(std::string flag, std::string value)
{
   return resp_reply(
      {{type::array, 2, 0, ""}, number(std::move(flag), 1), number(std::move(value), 1)});
}

error_code const unexpected_reply = error::unexpected_reply;

// A parse that must fail. Failures name the caller's line.
void check_acquire_rejects(generic_response const& r,
                           std::source_location at = std::source_location::current())
{
   BOOST_TEST_CONTEXT("called from line " << at.line())
   {
      acquire_reply out;
      BOOST_TEST(locksmith::detail::parse_acquire(r, out) == unexpected_reply);
   }
}

void check_ownership_rejects(generic_response const& r,
                             std::source_location at = std::source_location::current())
{
   BOOST_TEST_CONTEXT("called from line " << at.line())
   {
      ownership out = ownership::done;
      BOOST_TEST(locksmith::detail::parse_ownership(r, out) == unexpected_reply);
   }
}

// A parse that must succeed.
void check_ok(error_code const& ec, std::source_location at = std::source_location::current())
{
   BOOST_TEST(!ec, "line " << at.line() << ": failed with " << ec.message());
}

char const* name(ownership o)
{
   constexpr char const* names[] = {"done", "not_owner", "expired"};  // in the enum's order
   return names[static_cast<int>(o)];
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scripts)

BOOST_AUTO_TEST_CASE(sha1_known_vectors)
{
   using locksmith::detail::sha1_hex;
   BOOST_TEST(sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
   BOOST_TEST(sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
   BOOST_TEST(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

// The SHA-1s that the build computed (cmake/embed_scripts.cmake) are those of the texts.
BOOST_AUTO_TEST_CASE(scripts_have_distinct_shas_of_their_text)
{
   using namespace locksmith::detail;
   auto all = every_script();
   for (auto const* s : every_sharded_script())
      all.push_back(s);
   BOOST_TEST(all.size() == 18u);
   for (auto const* s : all) {
      BOOST_TEST_CONTEXT("script " << s->name)
      {
         BOOST_TEST(s->sha1.size() == 40u);
         BOOST_TEST(s->sha1.find_first_not_of("0123456789abcdef") == std::string::npos);
         BOOST_TEST(s->sha1 == sha1_hex(s->text));
         BOOST_TEST(!s->text.empty());
         for (auto const* other : all)
            BOOST_TEST((other == s || other->sha1 != s->sha1), "same SHA as " << other->name);
      }
   }
   auto const lock = all_scripts();
   BOOST_TEST((std::vector<script const*>{lock.begin(), lock.end()} ==
               std::vector<script const*>{all.begin(), all.begin() + 3}));
   BOOST_TEST(acquire_script().name == "acquire");
   BOOST_TEST(release_script().name == "release");
   BOOST_TEST(extend_script().name == "extend");
   BOOST_TEST((acquire_script().role == script_role::acquire &&
               release_script().role == script_role::release &&
               extend_script().role == script_role::extend && extend_script().batched));
   // The same object every time.
   BOOST_TEST(&acquire_script() == &acquire_script());
}

// A Redis Cluster's twins say SPUBLISH where their script says PUBLISH, and nothing else differs:
// the build makes them from the same file, no second copy of the Lua to drift. (What they do is
// checked against a real server by the script table, test/integration/test_script_table.cpp.)
BOOST_AUTO_TEST_CASE(sharded_twins_publish_with_spublish)
{
   using namespace locksmith::detail;
   auto sharded = [](std::string_view text) {
      constexpr std::string_view plain = "redis.call('PUBLISH', ";
      std::string out{text};
      for (auto at = out.find(plain); at != std::string::npos; at = out.find(plain, at))
         out.replace(at, plain.size(), "redis.call('SPUBLISH', ");
      return out;
   };
   std::size_t publishing = 0;
   for (auto const* s : every_script()) {
      BOOST_TEST_CONTEXT("script " << s->name)
      {
         auto const& twin = sharded_twin(*s);
         bool const publishes = s->text.find("'PUBLISH'") != std::string_view::npos;
         publishing += publishes ? 1 : 0;
         BOOST_TEST((&twin == s) == !publishes);
         BOOST_TEST(twin.text.find("'PUBLISH'") == std::string_view::npos);
         BOOST_TEST(twin.text == sharded(s->text));
         BOOST_TEST(twin.sha1 == sha1_hex(twin.text));
         BOOST_TEST((twin.role == s->role && twin.batched == s->batched && twin.name == s->name));
         BOOST_TEST(&sharded_twin(*s) == &twin);  // built once
      }
   }
   // The releases of the lock, the semaphore (and reader), the fair and the reentrant lock.
   BOOST_TEST(publishing == 4u);
   BOOST_TEST(every_sharded_script().size() == publishing);
   BOOST_TEST(sharded_twin(release_script()).text.find("'SPUBLISH'") != std::string_view::npos);
}

BOOST_AUTO_TEST_CASE(acquired)
{
   acquire_reply out;
   check_ok(locksmith::detail::parse_acquire(pair("1", "1700000000000000"), out));
   BOOST_TEST(out.acquired);
   BOOST_TEST(out.fence == 1700000000000000);
   BOOST_TEST(out.pttl.count() == 0);
}

// An unfenced waiter's try runs the script with a fence ttl of 0: granted, and no fence minted.
BOOST_AUTO_TEST_CASE(acquired_without_a_fence)
{
   acquire_reply out{.fence = 5};
   check_ok(locksmith::detail::parse_acquire(pair("1", "0"), out));
   BOOST_TEST(out.acquired);
   BOOST_TEST(out.fence == 0);
}

BOOST_AUTO_TEST_CASE(taken_with_pttl)
{
   acquire_reply out{.acquired = true, .fence = 5};
   check_ok(locksmith::detail::parse_acquire(pair("0", "29500"), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.fence == 0);
   BOOST_TEST(out.pttl.count() == 29500);
}

BOOST_AUTO_TEST_CASE(taken_without_ttl)
{
   acquire_reply out{.acquired = true, .fence = 5};
   check_ok(locksmith::detail::parse_acquire(pair("0", "-1"), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.pttl.count() == -1);
}

BOOST_AUTO_TEST_CASE(taken_by_waiters_only)
{
   acquire_reply out{.acquired = true, .fence = 5};
   check_ok(locksmith::detail::parse_acquire(pair("2", "500"), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.waiters_only);
   BOOST_TEST(out.fence == 0);
   BOOST_TEST(out.pttl.count() == 500);
   check_ok(locksmith::detail::parse_acquire(pair("0", "500"), out));
   BOOST_TEST(!out.waiters_only);
}

// The fair acquire script's refusal names the key's holder, empty when the key is free.
BOOST_AUTO_TEST_CASE(a_refusal_may_name_the_holder)
{
   auto named = [](std::string flag, std::string holder, type t = type::blob_string) {
      return resp_reply({{type::array, 3, 0, ""},
                         number(std::move(flag), 1),
                         number("500", 1),
                         {t, 1, 1, std::move(holder)}});
   };
   acquire_reply out;
   check_ok(locksmith::detail::parse_acquire(named("0", "0123abcd"), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.holder == "0123abcd");
   check_ok(locksmith::detail::parse_acquire(named("2", ""), out));
   BOOST_TEST(out.waiters_only);
   BOOST_TEST(out.holder.empty());
   check_ok(locksmith::detail::parse_acquire(pair("0", "500"), out));
   BOOST_TEST(out.holder.empty());
   check_acquire_rejects(named("1", "0123abcd"));  // a grant names nobody
   check_acquire_rejects(named("0", "7", type::number));
}

BOOST_AUTO_TEST_CASE(acquire_rejects_malformed_shapes)
{
   // Wrong number of elements.
   check_acquire_rejects(resp_reply({{type::array, 1, 0, ""}, number("1", 1)}));
   check_acquire_rejects(
      resp_reply({{type::array, 3, 0, ""}, number("1", 1), number("5", 1), number("6", 1)}));
   // An array that announces 2 elements but holds 3.
   check_acquire_rejects(
      resp_reply({{type::array, 2, 0, ""}, number("1", 1), number("5", 1), number("6", 1)}));
   // An array that announces 3 elements but holds 2.
   check_acquire_rejects(resp_reply({{type::array, 3, 0, ""}, number("1", 1), number("5", 1)}));
   check_acquire_rejects(resp_reply({{type::array, 0, 0, ""}}));
   check_acquire_rejects(resp_reply({}));
   // Not an array.
   check_acquire_rejects(resp_reply({number("1", 0)}));
   check_acquire_rejects(resp_reply({{type::null, 0, 0, ""}}));
   check_acquire_rejects(resp_reply({{type::set, 2, 0, ""}, number("1", 1), number("5", 1)}));
   // Elements that are not numbers.
   check_acquire_rejects(
      resp_reply({{type::array, 2, 0, ""}, {type::blob_string, 1, 1, "1"}, number("5", 1)}));
   check_acquire_rejects(
      resp_reply({{type::array, 2, 0, ""}, number("1", 1), {type::simple_string, 1, 1, "5"}}));
   check_acquire_rejects(
      resp_reply({{type::array, 2, 0, ""}, number("1", 1), {type::null, 0, 1, ""}}));
   check_acquire_rejects(
      resp_reply({{type::array, 2, 0, ""}, number("1", 1), {type::doublean, 1, 1, "5"}}));
   // A flag other than 0, 1 or 2.
   check_acquire_rejects(pair("3", "5"));
   check_acquire_rejects(pair("-1", "5"));
   check_acquire_rejects(pair("1", "-5"));  // granted with a negative fencing token
   // Numbers with junk, or none at all.
   check_acquire_rejects(pair("1", "12x"));
   check_acquire_rejects(pair("1x", "12"));
   check_acquire_rejects(pair("1", ""));
   check_acquire_rejects(pair("", "12"));
   check_acquire_rejects(pair("1", " 12"));
   check_acquire_rejects(pair("1", "1.5"));
   check_acquire_rejects(pair("1", "99999999999999999999"));  // beyond int64
}

BOOST_AUTO_TEST_CASE(acquire_rejects_server_errors)
{
   check_acquire_rejects(server_error_reply("NOSCRIPT No matching script. Please use EVAL."));
   check_acquire_rejects(
      server_error_reply("WRONGTYPE Operation against a key holding the wrong kind of value"));
   check_acquire_rejects(server_error_reply("ERR something", type::blob_error));
}

BOOST_AUTO_TEST_CASE(ownership_values)
{
   using locksmith::detail::parse_ownership;
   struct {
      char const* value;
      ownership expected;
   } const cases[] = {
      {"1", ownership::done},
      {"0", ownership::not_owner},
      {"-1", ownership::expired},
   };
   for (auto const& c : cases) {
      BOOST_TEST_CONTEXT("reply " << c.value)
      {
         // Start from a value other than the expected one, so that a no-op parse fails.
         ownership out = c.expected == ownership::done ? ownership::expired : ownership::done;
         check_ok(parse_ownership(resp_reply({number(c.value, 0)}), out));
         BOOST_TEST(name(out) == name(c.expected));
      }
   }
}

BOOST_AUTO_TEST_CASE(ownership_rejects_invalid_replies)
{
   for (auto const v : {"2", "-2", "10", "", "1x", "x", " 1", "+1"}) {
      BOOST_TEST_CONTEXT("reply \"" << v << "\"")
      {
         check_ownership_rejects(resp_reply({number(v, 0)}));
      }
   }
   check_ownership_rejects(resp_reply({}));
   check_ownership_rejects(resp_reply({{type::blob_string, 1, 0, "1"}}));
   check_ownership_rejects(resp_reply({{type::simple_string, 1, 0, "OK"}}));
   check_ownership_rejects(resp_reply({{type::null, 0, 0, ""}}));
   check_ownership_rejects(resp_reply({{type::boolean, 1, 0, "t"}}));
   check_ownership_rejects(resp_reply({{type::array, 1, 0, ""}, number("1", 1)}));
   check_ownership_rejects(resp_reply({number("1", 0), number("1", 0)}));
   check_ownership_rejects(server_error_reply("NOSCRIPT No matching script"));
   check_ownership_rejects(server_error_reply("ERR Error running script"));
}

// The extend script's answer: one entry per lease, in the order of the call.
BOOST_AUTO_TEST_CASE(ownerships_of_a_batch)
{
   using locksmith::detail::parse_ownerships;
   std::vector<ownership> out;
   check_ok(parse_ownerships(
      resp_reply({{type::array, 3, 0, ""}, number("1", 1), number("-1", 1), number("0", 1)}), 3,
      out));
   BOOST_TEST_REQUIRE(out.size() == 3u);
   BOOST_TEST(name(out[0]) == name(ownership::done));
   BOOST_TEST(name(out[1]) == name(ownership::expired));
   BOOST_TEST(name(out[2]) == name(ownership::not_owner));
   check_ok(parse_ownerships(resp_reply({{type::array, 0, 0, ""}}), 0, out));
   BOOST_TEST(out.empty());
}

BOOST_AUTO_TEST_CASE(ownerships_reject_other_shapes_and_lengths)
{
   using locksmith::detail::parse_ownerships;
   auto rejects = [](generic_response const& r, std::size_t count,
                     std::source_location at = std::source_location::current()) {
      std::vector<ownership> out;
      BOOST_TEST(parse_ownerships(r, count, out) == unexpected_reply, "line " << at.line());
   };
   auto const two = resp_reply({{type::array, 2, 0, ""}, number("1", 1), number("1", 1)});
   rejects(two, 1);  // a reply for another call
   rejects(two, 3);
   rejects(resp_reply({number("1", 0)}), 1);                           // the single script's scalar
   rejects(resp_reply({{type::array, 2, 0, ""}, number("1", 1)}), 2);  // cut short
   rejects(resp_reply({{type::array, 1, 0, ""}, number("2", 1)}), 1);
   rejects(resp_reply({{type::array, 1, 0, ""}, {type::array, 1, 1, ""}, number("1", 2)}), 1);
   rejects(resp_reply({{type::array, 1, 0, ""}, {type::blob_string, 1, 1, "1"}}), 1);
   rejects(server_error_reply("NOSCRIPT No matching script"), 1);
}

BOOST_AUTO_TEST_CASE(noscript_is_recognised)
{
   using locksmith::detail::is_noscript;
   BOOST_TEST(is_noscript(server_error_reply("NOSCRIPT No matching script")));
   BOOST_TEST(is_noscript(server_error_reply("NOSCRIPT No matching script", type::blob_error)));
   BOOST_TEST(!is_noscript(server_error_reply("ERR unknown command")));
   BOOST_TEST(!is_noscript(server_error_reply("WRONGTYPE NOSCRIPT")));
   BOOST_TEST(!is_noscript(server_error_reply("")));
   // A successful reply, even one that says NOSCRIPT, is no error.
   BOOST_TEST(!is_noscript(resp_reply({{type::simple_string, 1, 0, "NOSCRIPT"}})));
   BOOST_TEST(!is_noscript(pair("1", "5")));
}

BOOST_AUTO_TEST_CASE(server_error_text)
{
   using locksmith::detail::server_error;
   BOOST_TEST(server_error(server_error_reply("NOSCRIPT No matching script")) ==
              "NOSCRIPT No matching script");
   auto const wrongtype = server_error_reply("WRONGTYPE Operation against a key", type::blob_error);
   BOOST_TEST(server_error(wrongtype) == "WRONGTYPE Operation against a key");
   BOOST_TEST(server_error(pair("1", "5")) == "");
   BOOST_TEST(server_error(resp_reply({{type::simple_string, 1, 0, "ERR not really"}})) == "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_scripts
