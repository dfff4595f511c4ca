// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/verdicts.hpp"

#include "sansio/quorum.hpp"

#include <algorithm>

namespace locksmith::detail {
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// The yes votes that win: the fan-out's own quorum, or the majority (a result made by hand).
std::size_t needed(fanout_result const& r)
{
   return r.quorum != 0 ? r.quorum : quorum_of(r.nodes.size());
}

}  // namespace

error_code lasting_failure(fanout_result const& r)
{
   std::size_t lasting = 0;
   error_code first;
   for (auto const& n : r.nodes)
      if (n.reply.ec == error::auth_failed || n.reply.ec == error::tls_failed ||
          n.reply.ec == error::invalid_argument) {
         ++lasting;
         first = first ? first : n.reply.ec;
      }
   return lasting > r.nodes.size() - needed(r) ? first : error_code{};
}

namespace {

// True when the nodes whose call failed with `e` are enough on their own to sink the quorum.
bool sinks_quorum(fanout_result const& r, error e)
{
   auto const failed = std::count_if(r.nodes.begin(), r.nodes.end(),
                                     [e](node_result const& n) { return n.reply.ec == e; });
   return static_cast<std::size_t>(failed) > r.nodes.size() - needed(r);
}

// Why the failed calls lost, when nothing else did: writes short of replicas when they alone
// sink the quorum, else a server error if any node replied one, else a passing failure.
error_code failed_calls_reason(fanout_result const& r)
{
   if (sinks_quorum(r, error::not_enough_replicas))
      return error::not_enough_replicas;
   if (r.server_error())
      return error::unexpected_reply;
   return error::quorum_unreachable;
}

}  // namespace

error_code lost_reason(fanout_result const& r)
{
   if (auto ec = lasting_failure(r))
      return ec;
   if (r.count(vote::no) > 0)
      return error::lock_taken;
   return failed_calls_reason(r);
}

error_code ownership_result(fanout_result const& r)
{
   if (r.decision == outcome::won)
      return {};
   auto const n = r.nodes.size();
   if (r.count(vote::no) > n - needed(r)) {
      auto const other_owner =
         std::any_of(r.nodes.begin(), r.nodes.end(), [](node_result const& x) {
            return x.v == vote::no && x.own == ownership::not_owner;
         });
      return other_owner ? error::not_owner : error::lease_expired;
   }
   if (auto ec = lasting_failure(r))
      return ec;
   return failed_calls_reason(r);
}

bool split_among_waiters(fanout_result const& r)
{
   if (r.count(vote::yes) == 0 || r.count(vote::no) == 0)
      return false;
   // The nodes that did not answer may hold anything: they count for every holder.
   auto const open = r.count(vote::pending) + r.count(vote::failed);
   auto const quorum = r.quorum > 0 ? r.quorum : r.nodes.size() / 2 + 1;
   for (auto const& n : r.nodes) {
      if (n.v != vote::no || n.acquire.waiters_only)
         continue;
      if (n.acquire.holder.empty())
         return false;  // a holder that the reply does not name: it may hold a quorum
      auto const same = std::count_if(r.nodes.begin(), r.nodes.end(), [&](node_result const& m) {
         return m.v == vote::no && !m.acquire.waiters_only && m.acquire.holder == n.acquire.holder;
      });
      if (static_cast<std::size_t>(same) + open >= quorum)
         return false;
   }
   return true;
}

milliseconds shortest_pttl(fanout_result const& r)
{
   auto best = milliseconds{-1};
   for (auto const& n : r.nodes)
      if (n.v == vote::no && n.acquire.pttl.count() >= 0 &&
          (best.count() < 0 || n.acquire.pttl < best))
         best = n.acquire.pttl;
   return best;
}

microseconds slowest_reply(fanout_result const& r)
{
   auto slowest = microseconds{0};
   for (auto const& n : r.nodes)
      if (n.v == vote::yes || n.v == vote::no)
         slowest = std::max(slowest, std::chrono::duration_cast<microseconds>(n.reply.latency));
   return slowest;
}

std::uint64_t highest_fence(fanout_result const& r)
{
   std::uint64_t f = 0;
   for (auto const& n : r.nodes)
      if (n.v == vote::yes)
         f = std::max(f, static_cast<std::uint64_t>(n.acquire.fence));
   return f;
}

std::vector<bool> may_hold_key(fanout_result const& r, std::size_t nodes)
{
   std::vector<bool> may(nodes, true);
   for (std::size_t i = 0; i < nodes && i < r.nodes.size(); ++i)
      may[i] = r.nodes[i].v != vote::no && r.nodes[i].reply.sent;
   return may;
}

std::vector<std::size_t> unanswered_nodes(fanout_result const& r)
{
   std::vector<std::size_t> out;
   for (std::size_t i = 0; i < r.nodes.size(); ++i)
      if (r.nodes[i].v == vote::pending)
         out.push_back(i);
   return out;
}

void describe(fanout_result const& r, std::vector<std::shared_ptr<node>> const& nodes, report* diag)
{
   if (!diag)
      return;
   diag->attempts += 1;
   diag->nodes.resize(nodes.size());
   for (std::size_t i = 0; i < nodes.size() && i < r.nodes.size(); ++i) {
      auto& d = diag->nodes[i];
      auto const& n = r.nodes[i];
      d.node = nodes[i]->name();
      d.vote = static_cast<node_vote>(n.v);
      d.latency = std::chrono::duration_cast<microseconds>(n.reply.latency);
      d.ec = n.reply.ec;
      d.message = n.reply.server_message;
   }
}

}  // namespace locksmith::detail
