// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One script call as the nodes send it: its script, keys and arguments, and its requests.
#ifndef LOCKSMITH_SRC_SCRIPT_CALL_HPP
#define LOCKSMITH_SRC_SCRIPT_CALL_HPP

#include "sansio/scripts.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/redis/request.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// One script call, shared by the nodes of a fan-out. Its requests are built once.
///
/// Its keys and arguments are framed (`$<length>\r\n...\r\n` each) once, by its builder, and
/// copied as they are into its request, where it reads them back: a lock cycle's two calls cost
/// one allocation each beside their shared state, where strings of their own, their vectors and
/// Boost.Redis's framing cost six more per call (callgrind, locksmith-bench --scenario
/// independent --no-fence).
struct script_call {
   class builder;

   /// The framed keys, then arguments, of a call: views of bulk strings, `$<length>\r\n...\r\n`.
   using frame_list = boost::container::small_vector<std::string_view, 12>;

   /// Built by builder, or with_code: `frames` holds `nkeys` keys, then the arguments. Neither
   /// copied nor moved: it reads its keys from its own request.
   script_call(script const& s, frame_list const& frames, std::size_t nkeys, bool leads);
   script_call(script_call const&) = delete;
   script_call& operator=(script_call const&) = delete;

   script const* code;
   std::size_t quorum = 0;        // the nodes that must say yes; 0: the majority (quorum_of)
   bool leads = false;            // by_sha leads with a PING
   boost::redis::request by_sha;  // EVALSHA sha nkeys keys... args..., behind a PING if `leads`

   /// EVAL text nkeys keys... args..., built on first use: only after NOSCRIPT, which is rare,
   /// and the text is most of the bytes.
   boost::redis::request const& by_text() const;

   /// The first key (its slot is the call's: every key of a lock carries the name's hash tag),
   /// or empty when there is none.
   std::string_view first_key() const noexcept;

   /// The keys and the arguments, read back (tests, messages).
   std::vector<std::string_view> keys() const;
   std::vector<std::string_view> args() const;

   /// The same keys and arguments for another script (a cluster's sharded twin), with the same
   /// quorum and lead.
   std::shared_ptr<script_call const> with_code(script const& other) const;

private:
   frame_list frames() const;  // the keys' and arguments' frames, in by_sha
   // The contents of frames [from, to): `hello` of `$5\r\nhello\r\n`.
   std::vector<std::string_view> contents(std::size_t from, std::size_t to) const;

   // Where each key's and argument's frame begins and ends in by_sha's payload.
   boost::container::small_vector<std::pair<std::uint32_t, std::uint32_t>, 12> spans_;
   std::size_t nkeys_;
   mutable std::optional<boost::redis::request> by_text_;

   friend void push_script(boost::redis::request& req, script_call const& call, bool by_text);
};

/// Builds a script call's keys and arguments, framed as they go (script_call): a key's parts
/// (`prefix{name}suffix`, sansio/keys.hpp) are written in place, with no string of their own.
/// Keys and arguments may come in any order: the keys go first (cheapest when they come first).
class script_call::builder {
public:
   explicit builder(script const& code);

   /// The key `prefix{name}suffix` (lock_key).
   builder& key(std::string_view prefix, std::string_view name, std::string_view suffix = {});
   /// A key written whole.
   builder& key(std::string_view k);
   builder& arg(std::string_view a);
   builder& arg(long long n);
   /// An argument that names one of the name's keys or channels, `prefix{name}suffix` (a release
   /// channel).
   builder& arg_of_name(std::string_view prefix, std::string_view name, std::string_view suffix);

   /// The call; `leads`: see script_call::leads (only a script that publishes takes it).
   std::shared_ptr<script_call> done(bool leads = false) const;

private:
   template <class... Parts>
   void add(bool is_key, Parts... parts);

   script const& code_;
   boost::container::small_vector<char, 512> bytes_;         // the frames, one after the other
   boost::container::small_vector<std::uint32_t, 12> ends_;  // where each of them ends
   std::size_t nkeys_ = 0;
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
