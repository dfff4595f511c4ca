// libFuzzer target: CLI durations (cli::parse_duration, tools/cli_args.hpp).
// Checks: no crash or overflow (UBSan); what parses is non-negative and prints back the same.
#include "../tools/cli_args.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
   std::string_view const text{reinterpret_cast<char const*>(data), size};
   auto const d = locksmith::cli::parse_duration(text);
   if (!d)
      return 0;
   if (d->count() < 0)
      std::abort();
   auto const again = locksmith::cli::parse_duration(std::to_string(d->count()) + "ms");
   if (!again || *again != *d)
      std::abort();
   if (d->count() > 0)
      (void)locksmith::cli::default_grace(*d);
   return 0;
}
