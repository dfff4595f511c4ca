// Unit tests of to_hex and random_token (src/sansio/token.hpp).
#include "sansio/token.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <unordered_set>

namespace test_token {

namespace {

using locksmith::detail::random_token;
using locksmith::detail::to_hex;

bool is_lower_hex(char c)
{
   return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int hex_digit(char c)
{
   return c <= '9' ? c - '0' : c - 'a' + 10;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(token)

BOOST_AUTO_TEST_CASE(to_hex_of_known_bytes)
{
   BOOST_TEST(to_hex({}) == "00000000000000000000000000000000");
   BOOST_TEST(to_hex({0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                      0x0d, 0x0e, 0x0f}) == "000102030405060708090a0b0c0d0e0f");
   BOOST_TEST(to_hex({0xde, 0xad, 0xbe, 0xef, 0x00, 0x10, 0x20, 0x7f, 0x80, 0x9a, 0xa9, 0xc3, 0x3c,
                      0xf0, 0x0f, 0xff}) == "deadbeef0010207f809aa9c33cf00fff");
   std::array<std::uint8_t, 16> all_ff;
   all_ff.fill(0xff);
   BOOST_TEST(to_hex(all_ff) == "ffffffffffffffffffffffffffffffff");
}

BOOST_AUTO_TEST_CASE(random_token_is_32_lower_case_hex_digits)
{
   for (int i = 0; i < 1000; ++i) {
      auto const t = random_token();
      BOOST_TEST_REQUIRE(t.size() == 32u);
      for (char c : t)
         BOOST_TEST_REQUIRE(is_lower_hex(c), "token " << t << " has '" << c << "'");
   }
}

BOOST_AUTO_TEST_CASE(random_tokens_are_distinct)
{
   constexpr std::size_t count = 10'000;
   std::unordered_set<std::string> seen;
   for (std::size_t i = 0; i < count; ++i)
      seen.insert(random_token());
   BOOST_TEST(seen.size() == count);
}

// All 128 bits are random: over 10,000 tokens every position takes every hex digit (a position
// that missed one would be ~16 × (15/16)^10000 ≈ 10^-279 likely by chance). This catches a
// token of which part is constant, e.g. bytes that getrandom never filled.
BOOST_AUTO_TEST_CASE(every_position_takes_every_digit)
{
   std::array<std::bitset<16>, 32> digits{};
   for (int i = 0; i < 10'000; ++i) {
      auto const t = random_token();
      BOOST_TEST_REQUIRE(t.size() == 32u);
      for (std::size_t p = 0; p < t.size(); ++p) {
         BOOST_TEST_REQUIRE(is_lower_hex(t[p]));
         digits[p].set(static_cast<std::size_t>(hex_digit(t[p])));
      }
   }
   for (std::size_t p = 0; p < digits.size(); ++p)
      BOOST_TEST(digits[p].all(), "position " << p << " saw " << digits[p].count() << " digits");
}

// A forked child must not hand out the tokens its parent hands out next (the buffer of random
// bytes is per process, not copied across fork()).
BOOST_AUTO_TEST_CASE(a_forked_child_draws_other_tokens_than_its_parent)
{
   (void)locksmith::detail::random_token();  // fills this process's buffer
   int fds[2];
   BOOST_TEST_REQUIRE(::pipe(fds) == 0);
   pid_t const child = ::fork();
   BOOST_TEST_REQUIRE(child >= 0);
   if (child == 0) {
      auto const t = locksmith::detail::random_token();
      auto const n = ::write(fds[1], t.data(), t.size());
      ::_exit(n == static_cast<ssize_t>(t.size()) ? 0 : 1);
   }
   ::close(fds[1]);
   auto const mine = locksmith::detail::random_token();
   std::string theirs(32, '\0');
   auto const n = ::read(fds[0], theirs.data(), theirs.size());
   ::close(fds[0]);
   int status = 0;
   ::waitpid(child, &status, 0);
   BOOST_TEST(n == 32);
   BOOST_TEST(WIFEXITED(status));
   BOOST_TEST(mine != theirs);
}

// A label rides in the stored value, after the token and '@'; only a value of that exact shape
// reads as labelled.
BOOST_AUTO_TEST_CASE(a_label_is_split_from_its_token)
{
   using locksmith::detail::add_owner;
   using locksmith::detail::split_owner;
   auto const token = locksmith::detail::random_token();
   auto value = token;
   add_owner(value, "");
   BOOST_TEST(value == token);  // no label: the token as it is
   add_owner(value, "web-1:42@x");
   BOOST_TEST(value == token + "@web-1:42@x");
   BOOST_TEST(split_owner(value).first == token);
   BOOST_TEST(split_owner(value).second == "web-1:42@x");
   for (std::string other :
        {token, token + "@", std::string(31, 'a') + "@label", std::string(32, 'A') + "@label",
         std::string(32, 'g') + "@label", token + "#label", std::string{"to:x"}}) {
      BOOST_TEST(split_owner(other).first == other);
      BOOST_TEST(split_owner(other).second.empty());
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_token
