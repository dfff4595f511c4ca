// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/token.hpp>

#include <sys/random.h>

#include <cerrno>
#include <system_error>

namespace locksmith::detail {

std::string to_hex(std::array<std::uint8_t, 16> const& bytes)
{
   static constexpr char hex[] = "0123456789abcdef";
   std::string out(32, '0');
   for (std::size_t i = 0; i < bytes.size(); ++i) {
      out[2 * i] = hex[bytes[i] >> 4];
      out[2 * i + 1] = hex[bytes[i] & 0xf];
   }
   return out;
}

std::string random_token()
{
   std::array<std::uint8_t, 16> bytes{};
   std::size_t got = 0;
   while (got < bytes.size()) {
      // getrandom blocks only until the kernel's pool is first initialised, at boot.
      auto const n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
      if (n < 0) {
         if (errno == EINTR)
            continue;
         throw std::system_error(errno, std::generic_category(), "getrandom");
      }
      got += static_cast<std::size_t>(n);
   }
   return to_hex(bytes);
}

}  // namespace locksmith::detail
