// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The reply of the unfenced acquire (lock_options::fence = false), whose plain commands answer in
// a shape of their own, and the choice of parser by the call's code.
#ifndef LOCKSMITH_DETAIL_UNFENCED_REPLY_HPP
#define LOCKSMITH_DETAIL_UNFENCED_REPLY_HPP

#include "sansio/scripts.hpp"

namespace locksmith::detail {

/// Parses the unfenced acquire's reply (unfenced_acquire_script): the SET's OK or nil, and a
/// PTTL's integer if one follows (none is sent today: pttl -1, unknown). Its fence is 0, and a
/// PTTL of -2 (the key went between the two) reads as 0. error::unexpected_reply for a server
/// error or another shape (an acquire script's among them).
error_code parse_unfenced_acquire(boost::redis::generic_response const& r, acquire_reply& out);

/// The parser of the code's acquire reply: parse_unfenced_acquire for the plain commands, else
/// parse_acquire.
inline error_code parse_acquire(script const& code, boost::redis::generic_response const& r,
                                acquire_reply& out)
{
   return code.plain ? parse_unfenced_acquire(r, out) : parse_acquire(r, out);
}

}  // namespace locksmith::detail

#endif
