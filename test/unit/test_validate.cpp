// Unit tests of argument validation (src/sansio/validate.hpp) and of the
// "locksmith" error category (include/locksmith/error.hpp).
#include "sansio/validate.hpp"
#include "sansio/validity.hpp"
#include <locksmith/error.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace test_validate {

namespace {

using namespace std::chrono_literals;
using namespace locksmith;
using namespace locksmith::detail;

// The client's default node timeout, which validate_options weighs the TTL against.
auto const node_timeout = locksmith::config{}.node_timeout;

error_code const ok{};
error_code const invalid = error::invalid_argument;

error_code const all_errors[] = {
   error::invalid_argument,    error::lock_taken,  error::wait_timeout,
   error::quorum_unreachable,  error::lease_lost,  error::not_owner,
   error::lease_expired,       error::not_held,    error::unexpected_reply,
   error::validity_expired,    error::auth_failed, error::tls_failed,
   error::not_enough_replicas,
};

}  // namespace

BOOST_AUTO_TEST_SUITE(validate)

BOOST_AUTO_TEST_CASE(name_length)
{
   BOOST_TEST(validate_name("") == invalid);
   BOOST_TEST(validate_name("k") == ok);
   BOOST_TEST(validate_name(std::string(max_key_size, 'k')) == ok);
   BOOST_TEST(validate_name(std::string(max_key_size + 1, 'k')) == invalid);
   BOOST_TEST(validate_name(std::string(1, '\0')) == ok);  // a byte is a byte
}

BOOST_AUTO_TEST_CASE(ttl_range)
{
   BOOST_TEST(validate_ttl(0ms) == invalid);
   BOOST_TEST(validate_ttl(-1ms) == invalid);
   BOOST_TEST(validate_ttl(-30s) == invalid);
   BOOST_TEST(validate_ttl(1ms) == ok);
   BOOST_TEST(validate_ttl(min_ttl) == ok);
   BOOST_TEST(validate_ttl(30s) == ok);
   BOOST_TEST(validate_ttl(max_ttl) == ok);
   BOOST_TEST(validate_ttl(max_ttl + 1ms) == invalid);
}

BOOST_AUTO_TEST_CASE(default_options_are_valid)
{
   BOOST_TEST(validate_options("k", lock_options{}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.strategy = wait_strategy::subscribe},
                               node_timeout) == ok);
}

BOOST_AUTO_TEST_CASE(options_check_name_and_ttl)
{
   BOOST_TEST(validate_options("", lock_options{}, node_timeout) == invalid);
   BOOST_TEST(validate_options(std::string(max_key_size + 1, 'k'), lock_options{}, node_timeout) ==
              invalid);
   BOOST_TEST(validate_options("k", lock_options{.ttl = 0ms}, node_timeout) == invalid);
   BOOST_TEST(validate_options("k", lock_options{.ttl = max_ttl + 1ms}, node_timeout) == invalid);
}

// GCC 12 destroys a braced temporary of a co_await expression twice: the options must have
// nothing to free (lock_options::owner keeps its bytes inline).
static_assert(std::is_trivially_destructible_v<lock_options>);

// A holder label: bytes, at most 256, no ASCII control character (status prints a holder a
// line); the empty label is none. Longer ones are kept as too long, and refused.
BOOST_AUTO_TEST_CASE(options_owner)
{
   using locksmith::max_owner_size;
   for (std::string owner : {std::string{}, std::string{"web-1:4242"}, std::string{"é@x y"},
                             std::string(max_owner_size, 'o')})
      BOOST_TEST(validate_options("k", lock_options{.owner = owner}, node_timeout) == ok, owner);
   for (std::string owner : {std::string(max_owner_size + 1, 'o'), std::string{"a\nb"},
                             std::string{"a\0b", 3}, std::string{"\t"}, std::string{"\x7f"}})
      BOOST_TEST(validate_options("k", lock_options{.owner = owner}, node_timeout) == invalid,
                 owner.size());
   BOOST_TEST((lock_options{.owner = "web-1"}.owner.view() == "web-1"));
   BOOST_TEST(lock_options{.owner = std::string(max_owner_size, 'o')}.owner.view().size() ==
              max_owner_size);
   BOOST_TEST(!lock_options{.owner = std::string(1000, 'o')}.owner.fits());
   BOOST_TEST(lock_options{.owner = std::string(1000, 'o')}.owner.view().empty());
}

BOOST_AUTO_TEST_CASE(options_wait)
{
   BOOST_TEST(validate_options("k", lock_options{.wait = -1ms}, node_timeout) == invalid);
   BOOST_TEST(validate_options("k", lock_options{.wait = 0ms}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.wait = 1h}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.wait = forever}, node_timeout) == ok);
   // Longer than forever is forever too (deadline_after), not an error.
   BOOST_TEST(validate_options("k", lock_options{.wait = std::chrono::milliseconds::max()},
                               node_timeout) == ok);
}

// max_hold: empty is no cap; a given cap must be positive (zero no longer means "no cap").
BOOST_AUTO_TEST_CASE(options_max_hold)
{
   BOOST_TEST(!lock_options{}.max_hold.has_value());
   BOOST_TEST(validate_options("k", lock_options{.max_hold = std::nullopt}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.max_hold = 1ms}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.max_hold = 1h}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.max_hold = forever}, node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.max_hold = 0ms}, node_timeout) == invalid);
   BOOST_TEST(validate_options("k", lock_options{.max_hold = -1ms}, node_timeout) == invalid);
}

BOOST_AUTO_TEST_CASE(options_drift)
{
   BOOST_TEST(validate_options("k", lock_options{.ttl = 10s, .drift = 10s}, node_timeout) ==
              invalid);
   BOOST_TEST(validate_options("k", lock_options{.ttl = 10s, .drift = 11s}, node_timeout) ==
              invalid);
   BOOST_TEST(validate_options("k", lock_options{.ttl = 10s, .drift = -1ms}, node_timeout) ==
              invalid);
   // (A drift this large leaves no room to renew: see the renew cases below.)
   BOOST_TEST(validate_options("k", lock_options{.ttl = 10s, .drift = 9999ms, .renew = false},
                               node_timeout) == ok);
   BOOST_TEST(validate_options("k", lock_options{.ttl = 10s, .drift = 0ms}, node_timeout) == ok);
}

BOOST_AUTO_TEST_CASE(options_spin)
{
   auto const with = [](wait_strategy::spin s) { return lock_options{.strategy = s}; };
   BOOST_TEST(validate_options("k", with({.interval = 0ms}), node_timeout) == invalid);
   BOOST_TEST(validate_options("k", with({.interval = -1ms}), node_timeout) == invalid);
   BOOST_TEST(validate_options("k", with({.interval = 1ms}), node_timeout) == ok);
   BOOST_TEST(validate_options("k", with({.interval = 100ms, .jitter = -1ms}), node_timeout) ==
              invalid);
   BOOST_TEST(validate_options("k", with({.interval = 100ms, .jitter = 0ms}), node_timeout) == ok);
}

BOOST_AUTO_TEST_CASE(renewal_room_follows_the_watchdog_schedule)
{
   // ttl - ttl/3 - drift - 2 node timeouts; ttl/3 in whole ms, the default drift ttl/100 + 2 ms.
   BOOST_TEST(renewal_room(1s, std::nullopt, 50ms).count() == 1000 - 333 - 12 - 100);
   BOOST_TEST(renewal_room(155ms, std::nullopt, 50ms).count() == 155 - 51 - 3 - 100);
   BOOST_TEST(renewal_room(300ms, 0ms, 50ms).count() == 300 - 100 - 0 - 100);
   BOOST_TEST(renewal_room(100ms, std::nullopt, 50ms).count() < 0);
}

// With renew, the first renewal (at ttl/3) must be able to answer, one node timeout after it
// starts, before the watchdog's loss deadline: ttl - ttl/3 - drift - loss_margin > 2 × node
// timeout. Each boundary is checked on both sides.
BOOST_AUTO_TEST_CASE(renew_needs_a_ttl_with_room_to_renew)
{
   auto const check = [](lock_options o, std::chrono::milliseconds nt) {
      return validate_options("k", o, nt);
   };
   // Default drift and node timeout, no margin: 155 ms is the shortest TTL.
   BOOST_TEST(check({.ttl = 154ms}, 50ms) == invalid);
   BOOST_TEST(check({.ttl = 155ms}, 50ms) == ok);
   BOOST_TEST(check({.ttl = 100ms}, 50ms) == invalid);  // the example
   // Without renewal the same TTLs are fine: the lease just expires.
   BOOST_TEST(check({.ttl = 154ms, .renew = false}, 50ms) == ok);
   BOOST_TEST(check({.ttl = 100ms, .renew = false}, 50ms) == ok);
   // The loss margin comes out of the room: 1 s allows up to 554 ms.
   BOOST_TEST(check({.ttl = 1s, .loss_margin = 554ms}, 50ms) == ok);
   BOOST_TEST(check({.ttl = 1s, .loss_margin = 555ms}, 50ms) == invalid);
   BOOST_TEST(check({.ttl = 1s, .renew = false, .loss_margin = 555ms}, 50ms) == ok);
   // So does an explicit drift.
   BOOST_TEST(check({.ttl = 300ms, .drift = 0ms, .loss_margin = 99ms}, 50ms) == ok);
   BOOST_TEST(check({.ttl = 300ms, .drift = 0ms, .loss_margin = 100ms}, 50ms) == invalid);
   BOOST_TEST(check({.ttl = 300ms, .drift = 1ms, .loss_margin = 99ms}, 50ms) == invalid);
   // And the node timeout counts twice.
   BOOST_TEST(check({.ttl = 155ms}, 51ms) == invalid);
   BOOST_TEST(check({.ttl = 60ms, .drift = 1ms}, 5ms) == ok);
   BOOST_TEST(check({.ttl = 30s}, 1h) == invalid);
}

// The rule, checked against the watchdog's own arithmetic (src/engines/watchdog.cpp, from the
// lease's start): a lease is accepted with renew exactly when its first renewal would be started.
BOOST_AUTO_TEST_CASE(accepted_renewing_leases_get_a_renewal)
{
   using locksmith::detail::default_drift;
   for (auto const nt : {1ms, 5ms, 50ms, 200ms}) {
      for (auto const margin : {0ms, 10ms, 300ms}) {
         for (auto ttl = 1ms; ttl <= 2s; ttl += 1ms) {
            auto const valid_until = ttl - default_drift(ttl);
            auto const lost_at = valid_until - nt - margin;
            auto const last_start = lost_at - nt;
            auto const renew_at = ttl / 3;
            // A timer never fires early, so a renewal due exactly at last_start finds itself late.
            bool const renews = renew_at < last_start;
            auto o = lock_options{.ttl = ttl, .loss_margin = margin};
            bool const accepted = validate_options("k", o, nt) == ok;
            // Other rules (margin below the TTL, drift below the TTL) may refuse it too.
            o.renew = false;
            if (validate_options("k", o, nt) == ok && accepted != renews)
               BOOST_ERROR("ttl " << ttl.count() << " ms, node timeout " << nt.count()
                                  << " ms, margin " << margin.count() << " ms: accepted "
                                  << accepted << ", renews " << renews);
         }
      }
   }
}

// An option set that validation accepts must be able to yield a lock. With the default drift
// (ttl / 100 + 2 ms), a TTL of 2 ms or less leaves no validity even for an instant acquisition,
// so every attempt would end in validity_expired.
BOOST_AUTO_TEST_CASE(accepted_ttls_leave_validity_under_the_default_drift)
{
   using locksmith::detail::default_drift;
   using locksmith::detail::valid_until;
   auto const start = locksmith::detail::clock::now();
   for (std::chrono::milliseconds const ttl : {min_ttl, 2ms, 3ms, 100ms, 30000ms, max_ttl}) {
      BOOST_TEST_CONTEXT("ttl " << ttl.count() << " ms")
      {
         if (validate_options("k", lock_options{.ttl = ttl, .renew = false}, node_timeout) == ok) {
            BOOST_TEST(default_drift(ttl).count() < ttl.count());
            BOOST_TEST(valid_until(start, start, ttl, default_drift(ttl)).has_value());
         }
      }
   }
}

BOOST_AUTO_TEST_CASE(default_config_is_valid)
{
   BOOST_TEST(validate_config(config{}) == ok);
   auto const three = config{.nodes = {"redis://a", "redis://b:6380", "rediss://c/1"}};
   BOOST_TEST(validate_config(three) == ok);
}

BOOST_AUTO_TEST_CASE(config_needs_nodes)
{
   BOOST_TEST(validate_config(config{.nodes = {}}) == invalid);
}

BOOST_AUTO_TEST_CASE(config_rejects_a_malformed_url_among_good_ones)
{
   auto const with = [](std::vector<std::string> nodes) {
      return config{.nodes = std::move(nodes)};
   };
   BOOST_TEST(validate_config(with({"http://b", "redis://a", "redis://c"})) == invalid);
   BOOST_TEST(validate_config(with({"redis://a", "redis://b:0", "redis://c"})) == invalid);
   BOOST_TEST(validate_config(with({"redis://a", "redis://b", "redis://"})) == invalid);
   BOOST_TEST(validate_config(with({"redis://a", "redis://b", "redis://c"})) == ok);
}

BOOST_AUTO_TEST_CASE(config_takes_sentinel_managed_masters_but_not_through_tls)
{
   auto const with = [](std::string url) { return config{.nodes = {std::move(url)}}; };
   BOOST_TEST(validate_config(with("redis+sentinel://a,b:26380/mymaster")) == ok);
   BOOST_TEST(
      validate_config(config{.nodes = {"redis+sentinel://a/m", "redis://b", "redis://c"}}) == ok);
   BOOST_TEST(validate_config(with("rediss+sentinel://a/mymaster")) == invalid);
   BOOST_TEST(validate_config(with("redis+sentinel://a")) == invalid);
}

BOOST_AUTO_TEST_CASE(config_takes_clusters_but_not_through_tls)
{
   auto const with = [](std::string url) { return config{.nodes = {std::move(url)}}; };
   BOOST_TEST(validate_config(with("redis+cluster://a,b:7001")) == ok);
   // RedLock over independent clusters: each is one node.
   BOOST_TEST(validate_config(config{
                 .nodes = {"redis+cluster://a", "redis+cluster://b", "redis+cluster://c"}}) == ok);
   BOOST_TEST(validate_config(with("rediss+cluster://a")) == invalid);
   BOOST_TEST(validate_config(with("redis+cluster://a/0")) == invalid);
}

BOOST_AUTO_TEST_CASE(config_replica_timeout)
{
   BOOST_TEST(validate_config(config{.wait_replicas = 1}) == ok);
   BOOST_TEST(validate_config(config{.wait_replicas = 2, .replica_timeout = 49ms}) == ok);
   BOOST_TEST(validate_config(config{.replica_timeout = 50ms}) == invalid);
   BOOST_TEST(validate_config(config{.replica_timeout = 0ms}) == invalid);
   BOOST_TEST(validate_config(config{.replica_timeout = -1ms}) == invalid);
   BOOST_TEST(validate_config(config{.node_timeout = 1s, .replica_timeout = 999ms}) == ok);
}

BOOST_AUTO_TEST_CASE(config_prefix)
{
   BOOST_TEST(validate_config(config{.prefix = "locks{"}) == invalid);
   BOOST_TEST(validate_config(config{.prefix = "locks}"}) == invalid);
   BOOST_TEST(validate_config(config{.prefix = "{x}:"}) == invalid);
   BOOST_TEST(validate_config(config{.prefix = ""}) == ok);
   BOOST_TEST(validate_config(config{.prefix = "app:locks:"}) == ok);
}

BOOST_AUTO_TEST_CASE(config_timeouts)
{
   BOOST_TEST(validate_config(config{.node_timeout = 0ms}) == invalid);
   BOOST_TEST(validate_config(config{.node_timeout = -1ms}) == invalid);
   BOOST_TEST(validate_config(config{.node_timeout = 1ms}) == ok);
   BOOST_TEST(validate_config(config{.reconnect_wait = -1ms}) == invalid);
   BOOST_TEST(validate_config(config{.health_check_interval = -1ms}) == invalid);
}

BOOST_AUTO_TEST_CASE(error_category_is_locksmith)
{
   BOOST_TEST(std::string{make_error_code(error::lock_taken).category().name()} == "locksmith");
   BOOST_TEST(std::string{locksmith::error_category().name()} == "locksmith");
   // The enum converts implicitly, to the same code.
   error_code const ec = error::wait_timeout;
   BOOST_TEST(ec == make_error_code(error::wait_timeout));
   BOOST_TEST(ec.value() == static_cast<int>(error::wait_timeout));
   BOOST_TEST(&ec.category() == &locksmith::error_category());
   BOOST_TEST(ec != make_error_code(error::lock_taken));
   // Zero is success, so no enumerator may take it.
   BOOST_TEST(static_cast<int>(error::invalid_argument) != 0);
}

BOOST_AUTO_TEST_CASE(every_error_has_its_own_message)
{
   auto const unknown = locksmith::error_category().message(0);
   BOOST_TEST(unknown == locksmith::error_category().message(9999));
   std::set<std::string> messages;
   for (auto const& ec : all_errors) {
      BOOST_TEST_CONTEXT("error " << ec.value())
      {
         BOOST_TEST(&ec.category() == &locksmith::error_category());
         BOOST_TEST(!ec.message().empty());
         BOOST_TEST(ec.message() != unknown);
         BOOST_TEST(static_cast<bool>(ec));
      }
      messages.insert(ec.message());
   }
   BOOST_TEST(messages.size() == std::size(all_errors));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_validate
