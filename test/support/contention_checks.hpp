// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What a contention run (support/contention.hpp) must show in a Boost.Test case: every cycle
// done, no overlap at the resource, no fence inversion, no error. (contention.hpp itself is free
// of Boost.Test: the benchmark uses it too.)
#pragma once

#include "support/contention.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>

namespace locksmith::test {

inline void check_contention(contention_tally const& t, contention_shape const& s, char const* what)
{
   BOOST_TEST_MESSAGE(
      what << ": " << t.cycles << " cycles (" << static_cast<long>(t.per_second()) << "/s), "
           << t.overlaps << " overlaps, " << t.inversions << " fence inversions, " << t.errors
           << " errors, longest wait "
           << std::chrono::duration_cast<std::chrono::milliseconds>(t.longest_wait).count()
           << " ms");
   for (auto const& [kind, n] : t.kinds)
      BOOST_TEST_MESSAGE("  " << kind << ": " << n);
   BOOST_TEST(t.cycles >= s.cycles);
   BOOST_TEST(t.overlaps == 0);
   BOOST_TEST(t.inversions == 0);
   BOOST_TEST(t.errors == 0);
}

}  // namespace locksmith::test
