// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// cluster_node's slot map: which master owns each slot, reloaded with CLUSTER SLOTS when a
// redirection or a failed call says it is stale, and the sharded subscriptions that follow it.
#include "transport/cluster_node.hpp"

#include <algorithm>
#include <utility>

namespace locksmith::detail {
namespace redis = boost::redis;
using clock = std::chrono::steady_clock;

namespace {

// The shortest time between two reloads of the slot map that failed calls ask for: every call
// to a dead master fails, and a reload asks the cluster once for all of them.
constexpr std::chrono::milliseconds refresh_spacing{200};

}  // namespace

std::string const& cluster_node::address_of(std::shared_ptr<redis_node> const& n) const
{
   for (auto const& [addr, m] : masters_)
      if (m == n)
         return addr;
   return masters_.begin()->first;  // every master is in masters_; not reached
}

void cluster_node::follow_slots()
{
   run(shards_.follow(
          [this](std::string const& channel) { return address_of(owner_of(hash_slot(channel))); }),
       false);
}

std::shared_ptr<redis_node> cluster_node::owner_of(std::uint16_t slot) const
{
   // Before the map is known, the first seed answers, or redirects.
   return owner_[slot] ? owner_[slot] : seeds_.front();
}

void cluster_node::refresh()
{
   if (stopped_)
      return;
   if (refreshing_) {
      refresh_again_ = true;
      return;
   }
   refreshing_ = true;
   last_refresh_ = clock::now();
   ask_slots(std::make_shared<std::vector<slots_source> const>(slots_sources()), 0);
}

void cluster_node::refresh_soon()
{
   if (stopped_ || refresh_scheduled_)
      return;
   auto const at = last_refresh_ + refresh_spacing;
   if (clock::now() >= at)
      return refresh();
   refresh_scheduled_ = true;
   refresh_timer_.expires_at(at);
   refresh_timer_.async_wait([self = shared_from_this()](error_code) {
      self->refresh_scheduled_ = false;
      self->refresh();
   });
}

std::vector<cluster_node::slots_source> cluster_node::slots_sources() const
{
   std::vector<slots_source> from;
   auto const host_of = [](std::string const& addr) { return addr.substr(0, addr.rfind(':')); };
   // The last node that answered is the likeliest to answer again: a dead first seed must not
   // cost every reload a timeout. A silent node goes last: CLUSTER SLOTS would queue behind the
   // calls it does not answer, and a master paused by a manual failover (CLUSTER FAILOVER) keeps
   // them for up to 5 s while the others already know its replica took over.
   for (bool const silent : {false, true}) {
      auto const add = [&](std::string host, std::shared_ptr<redis_node> const& n) {
         bool const known = std::any_of(from.begin(), from.end(),
                                        [&](slots_source const& s) { return s.node == n; });
         if (!known && n->silent() == silent)
            from.push_back({std::move(host), n});
      };
      for (auto const& [addr, n] : masters_)
         if (n == answered_slots_)
            add(host_of(addr), n);
      for (std::size_t i = 0; i < seeds_.size(); ++i)
         add(url_.seeds[i].host, seeds_[i]);
      for (auto const& [addr, n] : masters_)
         add(host_of(addr), n);
   }
   return from;
}

void cluster_node::ask_slots(std::shared_ptr<std::vector<slots_source> const> from, std::size_t i)
{
   if (stopped_ || i >= from->size()) {
      refreshing_ = false;
      if (!stopped_) {
         log_(log_level::warning, [&] { return name_ + ": no node answered CLUSTER SLOTS"; });
         // Failed calls ask again, no more often than refresh_spacing.
         refresh_again_ = false;
      }
      return;
   }
   auto req = std::make_shared<redis::request>();
   req->push("CLUSTER", "SLOTS");
   auto const& source = (*from)[i];
   source.node->command(
      std::move(req), slots_timeout,
      [self = shared_from_this(), from, i](error_code ec, redis::generic_response&& resp) {
         std::optional<std::vector<slot_range>> map;
         if (!ec && !resp.has_error())
            map = parse_cluster_slots(resp.value());
         auto const& asked = (*from)[i].node;
         if (!map || map->empty()) {
            self->log_(log_level::debug, [&] {
               return asked->name() + ": CLUSTER SLOTS failed (" +
                      (ec                 ? ec.message()
                       : resp.has_error() ? resp.error().diagnostic
                                          : "no slots") +
                      ")";
            });
            return self->ask_slots(from, i + 1);
         }
         self->log_(log_level::debug, [&] {
            std::string owners;
            for (auto const& r : *map)
               owners += " " + std::to_string(r.first) + "-" + std::to_string(r.last) + ":" +
                         r.master.port;
            return asked->name() + ": answered CLUSTER SLOTS" + owners;
         });
         self->answered_slots_ = asked;
         self->apply(*map, (*from)[i].host);
         self->refreshing_ = false;
         if (std::exchange(self->refresh_again_, false))
            self->refresh();
      });
}

void cluster_node::apply(std::vector<slot_range> map, std::string const& asked_host)
{
   std::fill(owner_.begin(), owner_.end(), nullptr);
   for (auto& r : map) {
      if (r.master.host.empty())
         r.master.host = asked_host;
      auto const m = master_for(r.master);
      std::fill(owner_.begin() + r.first, owner_.begin() + r.last + 1, m);
   }
   auto const moved = moved_slots(map_, map);
   map_ = std::move(map);
   follow_slots();
   if (std::find(moved.begin(), moved.end(), true) != moved.end())
      reroute(moved);
}

void cluster_node::reroute(std::vector<bool> const& moved)
{
   // The owned calls still out to a master that lost their slot: one that is gone would hold
   // each until its timeout, then its retry would pause; sent to the new master now, with a node
   // timeout at least, while the first copy's reply, if any comes, is ignored (on_reply).
   auto const now = clock::now();
   std::erase_if(owned_, [](auto const& w) { return w.expired(); });
   for (auto const& w : owned_) {
      auto c = w.lock();
      if (!c || c->finished || !moved[c->slot] || owner_of(c->slot) == c->at)
         continue;
      c->deadline = std::max(c->deadline, now + cfg_.node_timeout);
      c->ran = true;  // the first copy may have run there
      route(c, owner_of(c->slot), false);
   }
   std::size_t again = 0;
   auto const first_key = [](auto const& call) { return call->first_key(); };
   for (auto const& call : last_per_key(releases_.since(now), resent_per_key, first_key)) {
      if (call->first_key().empty() || !moved[hash_slot(call->first_key())])
         continue;
      ++again;
      owner_of(hash_slot(call->first_key()))
         ->eval_even_if_silent(
            call, resend_timeout, [] { return true; }, [](node_reply&&) {});
   }
   if (again > 0)
      log_(log_level::info, [&] {
         return name_ + ": slots moved to another master; sending the last " +
                std::to_string(again) + " releases on them again";
      });
   if (on_reroute_)
      on_reroute_();
}

}  // namespace locksmith::detail
