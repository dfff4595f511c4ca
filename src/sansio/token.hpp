// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_TOKEN_HPP
#define LOCKSMITH_DETAIL_TOKEN_HPP

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

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

/// What separates a token from its holder's label (lock_options::owner) in a stored value.
inline constexpr char owner_separator = '@';

/// The value that a lease stores in Redis: the token itself, or with a label the token, '@'
/// and the label. Every script compares and stores the value whole, and the release messages
/// carry it whole, so the label needs no command, argument or key of its own, and goes with
/// the value. An empty label leaves the token as it is: the unlabelled path costs nothing.
void add_owner(std::string& token, std::string_view owner);

/// A stored value split into its token and its label: a labelled value is 32 lower-case hex
/// characters, '@' and at least one byte; any other value (a reentrant lock's owner digest, a
/// value written by an older version) is a token without a label.
std::pair<std::string_view, std::string_view> split_owner(std::string_view value) noexcept;

}  // namespace locksmith::detail

#endif
