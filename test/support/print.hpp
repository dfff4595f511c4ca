// Lets Boost.Test print locksmith values in failed assertions.
#pragma once

#include <locksmith/error.hpp>
#include <locksmith/report.hpp>

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
