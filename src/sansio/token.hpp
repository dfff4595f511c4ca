// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_TOKEN_HPP
#define LOCKSMITH_DETAIL_TOKEN_HPP

#include <array>
#include <cstdint>
#include <string>

namespace locksmith::detail {

/// Lower-case hex of the bytes.
std::string to_hex(std::array<std::uint8_t, 16> const& bytes);

/// A fresh owner token: 128 bits from the OS CSPRNG (getrandom), as 32 lower-case hex
/// characters. Never a counter, a thread id or a time: a token must not be guessable by another
/// client, nor repeat across restarts. Throws std::system_error if the kernel refuses, which
/// does not happen on Linux once the pool is initialised.
std::string random_token();

/// A client's tag (release_listener): 64 random bits, as 16 lower-case hex characters, so that
/// no two clients on a server share one.
inline std::string random_tag()
{
   return random_token().substr(0, 16);
}

}  // namespace locksmith::detail

#endif
