// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_QUARANTINE_HPP
#define LOCKSMITH_DETAIL_QUARANTINE_HPP

#include <locksmith/config.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// The restart quarantine in force for a config: config::restart_quarantine, or by default
/// 30 s with 3 nodes or more and none with fewer (one node has no quorum to protect).
std::chrono::milliseconds effective_quarantine(config const& cfg) noexcept;

/// The value of the field `name` in `INFO` text (lines of `name:value`), if it is there.
std::optional<std::string_view> info_field(std::string_view info, std::string_view name) noexcept;

/// `uptime_in_seconds` from the text of `INFO server`, if it is there and well formed.
std::optional<std::chrono::seconds> parse_uptime(std::string_view info) noexcept;

/// `run_id` from the text of `INFO server`: the server's id for this run, new at each start.
std::optional<std::string_view> parse_run_id(std::string_view info) noexcept;

/// The key on each node that says that a client trusted the node's current run of its server.
/// Its value is a mark (make_mark): the node's `run_id`, then the other runs that the writer
/// trusted with it. A server restarted empty has lost it; one restarted from a dump holds an
/// older run's id.
inline std::string trusted_run_key(std::string_view prefix)
{
   return std::string{prefix} + "trusted-run";
}

/// The mark written on a young node that a client keeps in quarantine in a fleet in use: it
/// vouches for no run, and says that the fleet was in use (see fleet_contacts).
inline constexpr std::string_view in_use_mark = "-";

/// A mark's value: `run_id`, then each of `also` (the runs of a fresh fleet, trusted together),
/// separated by spaces. A mark of an older version holds the run_id alone.
std::string make_mark(std::string_view run_id, std::vector<std::string> const& also = {});

/// True when the mark names `run_id` (first or among the others). Run ids are 40 random hex
/// digits, new at each start of a server: a mark that names a run vouches that a client trusted
/// that very run, wherever the mark is read.
bool mark_names(std::string_view mark, std::string_view run_id) noexcept;

/// What a client's first connection to a node told it about the node's memory.
struct first_contact {
   bool young = false;   // up for less than the quarantine
   bool marked = false;  // it holds a trusted_run_key, of this run or of an earlier one
   bool blind = false;   // young, and its mark could not be read (GET denied)
};

/// The fresh-fleet rule, and why it is sound.
///
/// The hazard is a node whose current run began after a lease counted on its previous run: it
/// has forgotten the key. A run's memory is whole from its start, so a run is safe to count
/// once some client with a quarantine trusted *that run* (its run_id) for a reason that holds:
/// it was up for longer than the quarantine (every lease it may have forgotten has expired), or
/// it was part of a fresh fleet (below). Marks pass that trust on: a mark that names a run,
/// read on any node, vouches for the run.
///
/// A node restarted empty and a node deployed a moment ago look alike: young, without a mark.
/// What tells them apart is whether the fleet was in use before the node's run began. If, at a
/// client's first contact with each of its nodes, every node is young and none holds a mark or
/// hides it (GET denied), no client with a quarantine has counted any of them (see below): the
/// fleet is fresh, and its runs of then may count. Its marks then name every run of the fleet,
/// so that a client whose first contact meets the fleet half marked, by a concurrent first
/// client, finds the unmarked nodes' runs named on their marked siblings: they were young
/// together at that first contact, not restarted since (a run restarted since has a new id).
/// A node marked with its own run alone (by a client that trusted it by its uptime, or by an
/// older version) vouches for no sibling: its unmarked young siblings wait out the quarantine.
///
/// Why "no mark anywhere" means "never counted": a client counts a young node early (fresh, or
/// vouched by a mark) only once every node of its fleet holds a mark (read there, or written
/// and acknowledged): its run's if the client trusts the run, or in_use_mark if the node sits
/// out its quarantine. So a later client can find every node young and unmarked only if every
/// node lost its mark, by a restart, after that count; and a node counted by its uptime was
/// old then. Either way every server of the fleet (re)started within the last quarantine: that
/// is the rule's limit, stated in config.hpp and the README. A lease that outlived such a
/// restart of the whole fleet lives nowhere any more, and its holder's next renewal finds it
/// lost; until then only the fence, which the new holder's exceeds, tells the two apart.
class fleet_contacts {
public:
   explicit fleet_contacts(std::size_t nodes)
       : contacts_(nodes)
   {}

   /// Records node `i`'s first contact (a later one for the same node is ignored). True when
   /// this one completes the picture and the fleet is fresh.
   bool record(std::size_t i, first_contact c);

   /// True once every node's first contact is known and they make a fresh fleet.
   bool fresh() const noexcept { return fresh_; }

   /// True once every node's first contact is known.
   bool complete() const noexcept { return known_ == contacts_.size(); }

   /// Learns the runs that a mark read on any node of the fleet names.
   void learn_mark(std::string_view mark);

   /// True when a mark read on some node of the fleet named this run.
   bool vouched(std::string_view run_id) const noexcept;

   std::size_t size() const noexcept { return contacts_.size(); }

private:
   std::vector<std::optional<first_contact>> contacts_;
   std::vector<std::string> vouched_;
   std::size_t known_ = 0;
   bool fresh_ = false;
};

/// What a node's server answered, on a new connection, to `INFO server` and to a GET of its mark.
struct contact_replies {
   std::optional<std::string_view> info = {};  // INFO's text; nothing when it failed
   std::string_view info_error = {};           // the server's error text, when it failed
   std::optional<std::string_view> mark = {};  // the mark, when the key exists
   std::string_view mark_error = {};           // GET's error text, when it failed
};

/// Why a node's restarts cannot be judged.
struct judge_failure {
   std::string why;      // the command and the server's reply; empty: they can be judged
   bool denied = false;  // an ACL denied the command (NOPERM): fails as auth_failed
};

/// What the client makes of those replies.
struct run_judgement {
   std::string run_id;  // empty: unknown (no run_id in INFO, or INFO failed)
   /// From when the node counts by its uptime alone; max() when it cannot be judged.
   std::chrono::steady_clock::time_point trusted_from;
   first_contact contact;  // for the fresh-fleet rule
   /// True when the mark names this run (a client trusted this run already).
   bool marked_now = false;
   /// Set when the node's restarts cannot be judged. Such a node never counts towards a quorum
   /// until a later answer judges it.
   judge_failure unjudged;
   /// Non-empty when its mark could not be read on a young server (the command and the
   /// reply): it then waits out its quarantine whatever its siblings say.
   std::string blind;
};

/// Judges a node's current run from its replies, learned at `now` with `quarantine` in force.
/// INFO denied, failed, or without `uptime_in_seconds`: unjudged (see config::restart_quarantine).
run_judgement judge_run(contact_replies const& r, std::string_view mark_key,
                        std::chrono::steady_clock::time_point now,
                        std::chrono::milliseconds quarantine);

/// From when a node's votes count: `quarantine` after its server started. Redis counts its
/// uptime as the difference of two wall-clock times in whole seconds (now and the start, each
/// rounded down), so a server up for 0.1 s may say 1: it started no later than
/// `learned_at - uptime + 1 s`. (Seen: "uptime_in_seconds:1" 0.1 s after a restart, which let a
/// 3 s quarantine end after 2.1 s.)
inline std::chrono::steady_clock::time_point
trusted_from(std::chrono::steady_clock::time_point learned_at, std::chrono::seconds uptime,
             std::chrono::milliseconds quarantine) noexcept
{
   return learned_at - uptime + std::chrono::seconds{1} + quarantine;
}

}  // namespace locksmith::detail

#endif
