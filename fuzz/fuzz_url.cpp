// libFuzzer target: node URLs (detail::parse_url), and the redacted form of what parses.
// Checks: no crash; redacted() never shows the password, and parses back to the same node.
#include "sansio/url.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace locksmith::detail;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
   std::string_view const text{reinterpret_cast<char const*>(data), size};
   auto const u = parse_url(text);
   if (!u)
      return 0;
   auto const shown = redacted(*u);
   auto const again = parse_url(shown);
   if (!again)
      std::abort();  // the redacted form must be a URL too
   auto expected = *u;
   expected.password = u->password.empty() ? "" : "***";
   if (!(*again == expected))
      std::abort();  // same scheme, user, host, port and database; the password masked
   return 0;
}
