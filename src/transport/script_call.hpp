// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One script call as the nodes send it: its script, keys and arguments, and its requests.
#ifndef LOCKSMITH_SRC_SCRIPT_CALL_HPP
#define LOCKSMITH_SRC_SCRIPT_CALL_HPP

#include "sansio/scripts.hpp"

#include <boost/redis/request.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::detail {

/// One script call, shared by the nodes of a fan-out. Its requests are built once.
struct script_call {
   /// `leads`: a release that may wake another process's waiter goes behind a PING
   /// (script::publishes says why); only a script that publishes takes it.
   script_call(script const& s, std::vector<std::string> keys, std::vector<std::string> args,
               bool leads = false);

   script const* code;
   std::vector<std::string> keys;
   std::vector<std::string> args;
   std::size_t quorum = 0;        // the nodes that must say yes; 0: the majority (quorum_of)
   bool leads = false;            // by_sha leads with a PING
   boost::redis::request by_sha;  // EVALSHA sha nkeys keys... args..., behind a PING if `leads`

   /// EVAL text nkeys keys... args..., built on first use: only after NOSCRIPT, which is rare,
   /// and the text is most of the bytes.
   boost::redis::request const& by_text() const;

private:
   mutable std::optional<boost::redis::request> by_text_;
};

/// Appends the call's command to `req`: EVALSHA (or EVAL with the text, `by_text`), or for the
/// unfenced acquire (script::plain, unfenced_acquire_script) the lock key's SET NX PX alone. No
/// PTTL beside it: only a waiter that sleeps until the holder's key expires reads one
/// (sleep_until_release), and such a waiter is subscribed, so its tries carry a registration,
/// which the acquire script sends (acquire_engine::begin); a plain try's loss leaves the PTTL
/// unknown (-1), and the fallback is the 100 ms probe, never a longer sleep.
void push_script(boost::redis::request& req, script_call const& call, bool by_text);

}  // namespace locksmith::detail

#endif
