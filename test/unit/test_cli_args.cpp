// The command-line tool's pure parsers and defaults (tools/cli_args.hpp).
#include "../../tools/cli_args.hpp"

#include "sansio/validate.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace test_cli_args {

using namespace std::chrono_literals;
using locksmith::cli::default_grace;
using locksmith::cli::parse_duration;
using locksmith::detail::renewal_room;

BOOST_AUTO_TEST_SUITE(cli_args)

BOOST_AUTO_TEST_CASE(accepts_an_integer_and_a_unit)
{
   BOOST_TEST((parse_duration("1ms") == std::optional{1ms}));
   BOOST_TEST((parse_duration("250ms") == std::optional{250ms}));
   BOOST_TEST((parse_duration("30s") == std::optional{std::chrono::milliseconds{30s}}));
   BOOST_TEST((parse_duration("5m") == std::optional{std::chrono::milliseconds{5min}}));
   BOOST_TEST((parse_duration("1h") == std::optional{std::chrono::milliseconds{1h}}));
   BOOST_TEST((parse_duration("0ms") == std::optional{0ms}));
   BOOST_TEST((parse_duration("0s") == std::optional{0ms}));
   BOOST_TEST((parse_duration("007s") == std::optional{7000ms}));
}

BOOST_AUTO_TEST_CASE(rejects_a_missing_or_unknown_unit)
{
   for (std::string_view text : {"", "10", "10x", "10 s", "10S", "10sec", "10mss", "10us", "1d"})
      BOOST_TEST(!parse_duration(text).has_value(), "accepted '" << text << "'");
}

BOOST_AUTO_TEST_CASE(rejects_a_missing_count)
{
   for (std::string_view text : {"s", "ms", "m", "h"})
      BOOST_TEST(!parse_duration(text).has_value(), "accepted '" << text << "'");
}

BOOST_AUTO_TEST_CASE(rejects_signs_fractions_and_spaces)
{
   for (std::string_view text :
        {"-1s", "+1s", "1.5s", ".5s", "1e3ms", " 1s", "1s ", "0x10s", "1_000ms"})
      BOOST_TEST(!parse_duration(text).has_value(), "accepted '" << text << "'");
}

BOOST_AUTO_TEST_CASE(rejects_values_that_overflow_milliseconds)
{
   // int64 milliseconds hold about 2.56e12 hours, 1.5e14 minutes, 9.2e15 seconds.
   for (std::string_view text :
        {"99999999999999999999999999ms", "18446744073709551616ms", "9223372036854775808ms",
         "9223372036854776s", "153722867280913m", "2562047788016h"})
      BOOST_TEST(!parse_duration(text).has_value(), "accepted '" << text << "'");
   BOOST_TEST((parse_duration("9223372036854775807ms") ==
               std::optional{std::chrono::milliseconds{9223372036854775807}}));
   BOOST_TEST((parse_duration("2562047788015h") ==
               std::optional{std::chrono::milliseconds{2562047788015LL * 3'600'000}}));
}

BOOST_AUTO_TEST_CASE(default_grace_is_one_second_unless_the_ttl_is_short)
{
   BOOST_TEST(default_grace(renewal_room(30s, std::nullopt, 50ms)).count() == 1000);
   BOOST_TEST(default_grace(renewal_room(24h, std::nullopt, 50ms)).count() == 1000);
   // --ttl 1s: half of 1000 - 333 - 12 - 2 x 50 = 555 ms.
   BOOST_TEST(default_grace(renewal_room(1s, std::nullopt, 50ms)).count() == 277);
   // The shortest TTL that can renew leaves 1 ms of room, and no grace.
   BOOST_TEST(default_grace(renewal_room(155ms, std::nullopt, 50ms)).count() == 0);
}

// Whatever the TTL and node timeout, if the TTL can be renewed at all, the default grace leaves
// room to renew: the library accepts it as the lease's loss margin.
BOOST_AUTO_TEST_CASE(default_grace_always_passes_the_librarys_check)
{
   for (auto nt : {1ms, 5ms, 50ms, 200ms}) {
      for (auto ttl = 1ms; ttl <= 5s; ttl += 1ms) {
         auto const room = renewal_room(ttl, std::nullopt, nt);
         if (room <= 0ms) {
            auto const ec = locksmith::detail::validate_options("k", {.ttl = ttl}, nt);
            BOOST_TEST((ec == locksmith::error::invalid_argument), "ttl " << ttl.count() << " ms");
            continue;
         }
         auto const grace = default_grace(room);
         auto const opts = locksmith::lock_options{.ttl = ttl, .loss_margin = grace};
         if (grace < 0ms || grace > 1s || locksmith::detail::validate_options("k", opts, nt))
            BOOST_ERROR("ttl " << ttl.count() << " ms, node timeout " << nt.count()
                               << " ms: default grace " << grace.count() << " ms");
      }
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_args
