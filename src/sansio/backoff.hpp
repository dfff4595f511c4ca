// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_BACKOFF_HPP
#define LOCKSMITH_DETAIL_BACKOFF_HPP

#include <locksmith/lock_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace locksmith::detail {

/// The pause of a spinning waiter before its next try: interval plus a uniform extra in
/// [0, jitter], cut to the time left before the wait's deadline.
template <class Random>
std::chrono::microseconds spin_delay(wait_strategy::spin const& s, std::chrono::microseconds left,
                                     Random& random)
{
   using std::chrono::microseconds;
   auto const jitter = std::max<std::int64_t>(microseconds{s.jitter}.count(), 0);
   std::uniform_int_distribution<std::int64_t> extra{0, jitter};
   auto const delay = microseconds{s.interval} + microseconds{extra(random)};
   return std::clamp(delay, microseconds{0}, std::max(left, microseconds{0}));
}

/// How long a subscribed waiter sleeps when no release message comes: until the key would
/// expire by itself (`pttl`, as the failed try reported it), plus a millisecond so that the
/// retry does not land just before the expiry. A key without TTL (pttl < 0, set by hand) is
/// probed every `fallback`. Cut to the time left before the wait's deadline.
inline std::chrono::microseconds expiry_delay(std::chrono::milliseconds pttl,
                                              std::chrono::milliseconds fallback,
                                              std::chrono::microseconds left)
{
   using std::chrono::microseconds;
   auto const delay =
      pttl.count() < 0 ? microseconds{fallback} : microseconds{pttl + std::chrono::milliseconds{1}};
   return std::clamp(delay, microseconds{0}, std::max(left, microseconds{0}));
}

/// The pause after a split vote (another contender took some nodes at the same moment; both
/// released): a uniform draw in [0, window], so that the two do not meet again at once. The
/// window is four times the slowest reply of the attempt, which spreads the retries over
/// several round trips, within [200 µs, node_timeout / 10]: a few milliseconds of sleep, where
/// a round trip takes 100 µs, would cost more than the split. Cut to the time left.
template <class Random>
std::chrono::microseconds lots_delay(std::chrono::microseconds slowest_reply,
                                     std::chrono::milliseconds node_timeout,
                                     std::chrono::microseconds left, Random& random)
{
   using std::chrono::microseconds;
   auto const cap = std::max(microseconds{node_timeout} / 10, microseconds{200});
   auto const window = std::clamp(4 * slowest_reply, microseconds{200}, cap);
   std::uniform_int_distribution<std::int64_t> draw{0, window.count()};
   return std::clamp(microseconds{draw(random)}, microseconds{0}, std::max(left, microseconds{0}));
}

}  // namespace locksmith::detail

#endif
