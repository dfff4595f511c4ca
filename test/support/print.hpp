// Lets Boost.Test print locksmith values in failed assertions.
#pragma once

#include <locksmith/error.hpp>
#include <locksmith/report.hpp>

#include "sansio/retry.hpp"
#include "sansio/watchdog_schedule.hpp"

#include <ostream>

namespace locksmith {
inline std::ostream& operator<<(std::ostream& os, error e)
{
   return os << "locksmith::error(" << static_cast<int>(e) << ": " << make_error_code(e).message()
             << ")";
}

inline std::ostream& operator<<(std::ostream& os, node_vote v)
{
   constexpr char const* names[] = {"none", "yes", "no", "failed"};
   return os << names[static_cast<int>(v)];
}
}  // namespace locksmith

namespace locksmith::detail {
// The steps of the pure decisions, by number (their enumerators are listed in order).
inline std::ostream& operator<<(std::ostream& os, next_step s)
{
   return os << static_cast<int>(s);
}

inline std::ostream& operator<<(std::ostream& os, renewal_step s)
{
   return os << static_cast<int>(s);
}
}  // namespace locksmith::detail
