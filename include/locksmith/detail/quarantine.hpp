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

/// The key on each node that says that a client trusted the node's current run of its server:
/// it holds that run's `run_id`, written by a client with a quarantine once the node's votes
/// count for it (by its uptime, or in a fresh fleet). A server restarted empty has lost it; one
/// restarted from a dump holds an older run's id.
inline std::string trusted_run_key(std::string_view prefix)
{
   return std::string{prefix} + "trusted-run";
}

/// What a client's first connection to a node told it about the node's memory.
struct first_contact {
   bool young = false;   // up for less than the quarantine
   bool marked = false;  // it holds a trusted_run_key, of this run or of an earlier one
};

/// The fresh-fleet rule. A node restarted empty and a node deployed a moment ago look alike; the
/// nodes beside it tell them apart. If some client trusted a node of the fleet (a mark of any
/// run), the fleet was in use, and a young node without its current run's mark may have
/// forgotten a held lock: it sits out the quarantine. If, at a client's first contact with each
/// of its nodes, every node is young and none is marked, no client with a quarantine has trusted
/// any of them yet, so none can hold such a client's lease to forget: the fleet is fresh, and its
/// nodes count at once for as long as their servers keep the run they had then. (A whole fleet
/// restarted empty at once also looks fresh: a lease that outlived that lives nowhere any more, and
/// its holder's next renewal finds it lost; until then only the fence, which the new holder's
/// exceeds, tells the two apart.)
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

private:
   std::vector<std::optional<first_contact>> contacts_;
   std::size_t known_ = 0;
   bool fresh_ = false;
};

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
