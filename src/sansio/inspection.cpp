// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/inspection.hpp"

#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"
#include "sansio/token.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>

namespace locksmith::detail {
namespace {

using boost::redis::resp3::type;
using std::chrono::milliseconds;

// A stored value as a holder: its token, and its label apart (token.hpp).
holder_info holder(std::string_view value, milliseconds left)
{
   auto const [token, owner] = split_owner(value);
   return {std::string{token}, left, std::string{owner}};
}

// Reads the inspect script's flat reply, element by element.
class reader {
public:
   explicit reader(std::vector<boost::redis::resp3::node> const& nodes)
       : nodes_{nodes}
   {}

   std::optional<std::string> text()
   {
      if (!next() || nodes_[at_].data_type != type::blob_string)
         return std::nullopt;
      return nodes_[at_].value;
   }

   std::optional<std::int64_t> integer()
   {
      std::int64_t v = 0;
      if (!next() || nodes_[at_].data_type != type::number || !whole(nodes_[at_].value, v))
         return std::nullopt;
      return v;
   }

   // A count n, then n pairs of token and ms left.
   bool tokens(std::vector<holder_info>& out)
   {
      auto const n = integer();
      if (!n || *n < 0 || static_cast<std::size_t>(*n) > nodes_.size())
         return false;
      out.clear();
      for (std::int64_t i = 0; i < *n; ++i) {
         auto token = text();
         auto left = integer();
         if (!token || !left)
            return false;
         out.push_back(holder(*token, milliseconds{*left}));
      }
      return true;
   }

   bool done() const noexcept { return at_ + 1 == nodes_.size(); }

   static bool whole(std::string_view s, std::int64_t& v)
   {
      auto const [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc{} && p == s.data() + s.size();
   }

private:
   bool next() noexcept
   {
      ++at_;
      return at_ < nodes_.size() && nodes_[at_].depth == 1;
   }

   std::vector<boost::redis::resp3::node> const& nodes_;
   std::size_t at_ = 0;  // the array's own node comes first
};

// What the keys show, as inspection.hpp's lock_kind tells it; `lock_type` is the lock key's TYPE.
lock_kind kind_of(std::string const& lock_type, node_inspection const& n, bool readers)
{
   if (lock_type == "zset")
      return lock_kind::semaphore;
   if (lock_type != "string" && lock_type != "none")
      return lock_kind::other;
   if (!n.holds.empty())
      return lock_kind::reentrant;
   if (readers || n.writer_waiting)
      return lock_kind::read_write;
   if (!n.waiters.empty())
      return lock_kind::fair;
   return lock_type == "string" ? lock_kind::lock : lock_kind::none;
}

}  // namespace

std::vector<std::string> inspect_keys(std::string_view prefix, std::string_view name)
{
   return {lock_key(prefix, name),           fence_key(prefix, name), readers_key(prefix, name),
           writer_waiting_key(prefix, name), holds_key(prefix, name), queue_key(prefix, name),
           queue_deadlines_key(prefix, name)};
}

error_code parse_inspection(boost::redis::generic_response const& r, node_inspection& out)
{
   if (r.has_error() || r.value().empty() || r.value()[0].data_type != type::array)
      return error::unexpected_reply;
   reader in{r.value()};
   auto const lock_type = in.text();
   auto const pttl = in.integer();
   auto value = in.text();
   auto const fence = in.text();
   auto const waiting = in.integer();
   std::vector<holder_info> members, readers;
   std::int64_t fence_value = 0;
   if (!lock_type || !pttl || !value || !fence || !waiting || !in.tokens(members) ||
       !in.tokens(readers) || !in.tokens(out.holds) || !in.tokens(out.waiters) || !in.done() ||
       (!fence->empty() && !reader::whole(*fence, fence_value)))
      return error::unexpected_reply;
   out.fence = fence_value;
   out.writer_waiting = *waiting != -2;
   out.kind = kind_of(*lock_type, out, !readers.empty());
   out.writer = out.kind == lock_kind::read_write && *lock_type == "string";
   out.holders.clear();
   if (*lock_type == "string")
      out.holders.push_back(holder(*value, milliseconds{*pttl}));
   else if (out.kind == lock_kind::semaphore)
      out.holders = std::move(members);
   else if (out.kind == lock_kind::read_write)
      out.holders = std::move(readers);
   // A reentrant lock's key holds its owner's digest, shared by all its holds, so no label:
   // the owner shows its latest hold's (the holds come by expiry).
   if (out.kind == lock_kind::reentrant && !out.holders.empty()) {
      auto const labelled = std::find_if(out.holds.rbegin(), out.holds.rend(),
                                         [](holder_info const& h) { return !h.owner.empty(); });
      if (labelled != out.holds.rend())
         out.holders.front().owner = labelled->owner;
   }
   return {};
}

void summarize(inspection& in)
{
   in.quorum = quorum_of(in.nodes.size());
   in.answered = 0;
   in.fence = 0;
   in.holders.clear();
   std::map<lock_kind, std::size_t> kinds;
   // For each token: its time left on each node that shows it, and its label.
   std::map<std::string, std::vector<milliseconds>> seen;
   std::map<std::string, std::string> owners;
   for (auto const& n : in.nodes) {
      if (n.ec)
         continue;
      ++in.answered;
      in.fence = std::max(in.fence, n.fence);
      if (n.kind != lock_kind::none)
         ++kinds[n.kind];
      for (auto const& h : n.holders) {
         seen[h.token].push_back(h.ttl);
         if (!h.owner.empty())
            owners.try_emplace(h.token, h.owner);
      }
   }
   in.kind = lock_kind::none;
   std::size_t most = 0;
   for (auto const& [k, count] : kinds)
      if (count > most)
         most = count, in.kind = k;
   for (auto& [token, left] : seen) {
      if (left.size() < in.quorum)
         continue;
      // A quorum holds it until the quorum-th longest time left runs out (-1, no TTL, is the
      // longest of all).
      auto longest_first = [](milliseconds a, milliseconds b) {
         return (a.count() < 0 ? milliseconds::max() : a) >
                (b.count() < 0 ? milliseconds::max() : b);
      };
      std::sort(left.begin(), left.end(), longest_first);
      in.holders.push_back({token, left[in.quorum - 1], owners[token]});
   }
}

error_code inspection_error(inspection const& in)
{
   if (in.answered >= in.quorum && in.quorum > 0)
      return {};
   auto any = [&](auto pred) { return std::any_of(in.nodes.begin(), in.nodes.end(), pred); };
   for (error_code hard : {error_code{error::auth_failed}, error_code{error::tls_failed},
                           error_code{error::unexpected_reply}})
      if (any([&](node_inspection const& n) { return n.ec == hard; }))
         return hard;
   return error::quorum_unreachable;
}

}  // namespace locksmith::detail
