// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The cluster's operations: a slot moved by hand (SETSLOT IMPORTING/MIGRATING, MIGRATE in
// batches, SETSLOT NODE), a reshard by the stock `redis-cli --cluster reshard`, a master killed
// (kill -9) and restarted once its replica is promoted, and `CLUSTER FAILOVER`.
#include "cluster_view.hpp"
#include "netem.hpp"
#include "operations.hpp"
#include "processes.hpp"

#include "support/cluster_group.hpp"
#include "support/sentinel_group.hpp"

#include "sansio/cluster.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using test::redis_server;

constexpr std::uint16_t moved_slots[] = {0, 1};  // the lowest: what a reshard of 2 slots moves

double ms_since(clock_type::time_point t0)
{
   return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// `count` names (`<stem>0`, `<stem>1`, ... kept when they fit) whose slots `fits`.
template <class Fits>
std::vector<std::string> names_where(std::string const& stem, std::size_t count, Fits fits)
{
   std::vector<std::string> names;
   for (long j = 0; names.size() < count; ++j) {
      auto const name = stem + std::to_string(j);
      if (fits(detail::hash_slot(name), names))
         names.push_back(name);
   }
   return names;
}

void expect_status(redis_server const& s, std::vector<std::string> const& args)
{
   auto const r = s.command(args, 10s);
   if (r.type != test::reply::kind::status)
      throw std::runtime_error(args.at(0) + " " + args.at(1) + " failed on port " +
                               std::to_string(s.port()) + ": " + r.str);
}

class cluster_ops final : public scenario {
public:
   cluster_ops(std::string name, chaos_options& o, ops_options const& x)
       : name_{std::move(name)}
       , x_{x}
       , failover_{name_ == "failover" || name_ == "manual-failover"}
       , group_{3, failover_, std::chrono::milliseconds{x.node_timeout_ms}}
   {
      for (std::size_t i = 0; i < group_.size(); ++i) {
         view_.add(group_.master(i));
         if (failover_)
            view_.add(group_.replica(i));
      }
      o.labels = failover_ ? failover_names(o) : moving_names(o);
      if (!failover_)
         for (auto slot : moved_slots)
            fill(slot, o.labels);
   }

   std::vector<std::string> worker_nodes() const override { return {group_.url()}; }
   std::vector<std::string> check_urls() const override { return view_.live_urls(); }
   bool keeps_leases() const override { return name_ != "failover"; }

   double operate(int k, std::function<void()> const& begin) override
   {
      if (name_ == "slot-move")
         return move_by_hand(moved_slots[k % 2], begin);
      if (name_ == "reshard")
         return reshard(begin);
      return name_ == "failover" ? kill_master(begin) : manual_failover(begin);
   }

   // A master refuses to vote for a replica of the master it last voted about within 2 x
   // cluster-node-timeout (Redis's clusterSendFailoverAuthIfNeeded: "can't vote about this master
   // before ..."), so a manual failover back and forth sooner is not elected, and the old master
   // keeps its clients paused until the failover's own timeout (5 s). An operator spaces them so.
   std::chrono::milliseconds spacing() const override
   {
      return std::chrono::milliseconds{name_ == "manual-failover" ? 2 * x_.node_timeout_ms + 1000
                                                                  : 0};
   }

   void settle() override
   {
      if (!view_.settle(30s))
         throw std::runtime_error("the cluster did not settle within 30 s of the operation");
   }

   std::string json_fields() const override
   {
      std::string f =
         ",\"masters\":3,\"replicas\":" + std::to_string(failover_ ? 3 : 0) +
         ",\"cluster_node_timeout_ms\":" + std::to_string(failover_ ? x_.node_timeout_ms : 15000);
      if (!failover_)
         f += ",\"filler_keys_per_slot\":" + std::to_string(x_.filler_keys) +
              ",\"moved_slots\":" + (name_ == "reshard" ? "2" : "1") +
              ",\"migrate_batch\":" + (name_ == "reshard" ? "10" : std::to_string(x_.batch));
      if (name_ == "failover")
         f += ",\"promotion_ms\":" + ms_list(promoted_ms_);
      if (name_ == "manual-failover")
         f += ",\"cluster_failover_retries\":" + std::to_string(failover_retries_);
      return f;
   }

private:
   // Names in the two lowest slots, half in each, the slots that a move or reshard moves.
   static std::vector<std::string> moving_names(chaos_options const& o)
   {
      auto const per_slot = static_cast<std::size_t>(std::max(1, o.names / 2));
      return names_where("m", per_slot * 2, [&](std::uint16_t slot, auto const& taken) {
         auto const in = [&](std::uint16_t s) {
            return std::count_if(taken.begin(), taken.end(), [&](std::string const& n) {
                      return detail::hash_slot(n) == s;
                   }) < static_cast<long>(per_slot);
         };
         return (slot == moved_slots[0] && in(slot)) || (slot == moved_slots[1] && in(slot));
      });
   }

   // Names on master 0's slots, the master that the first failover takes down.
   static std::vector<std::string> failover_names(chaos_options const& o)
   {
      return names_where("f", static_cast<std::size_t>(o.names),
                         [](std::uint16_t slot, auto&) { return slot < detail::slot_count / 3; });
   }

   // x.filler_keys keys with the hash tag of the slot's first name, on its master.
   void fill(std::uint16_t slot, std::vector<std::string> const& names)
   {
      auto const tag = *std::find_if(names.begin(), names.end(), [&](std::string const& n) {
         return detail::hash_slot(n) == slot;
      });
      auto const r = view_.owner(slot).command(
         {"EVAL",
          "for i = 1, tonumber(ARGV[1]) do redis.call('SET', KEYS[1] .. i, ARGV[2]) end "
          "return redis.status_reply('OK')",
          "1", "{" + tag + "}:filler:", std::to_string(x_.filler_keys), std::string(64, 'x')},
         30s);
      if (r.type != test::reply::kind::status)
         throw std::runtime_error("filling slot " + std::to_string(slot) + " failed: " + r.str);
   }

   // The next master round the three, for a slot's new owner.
   redis_server& next_master(redis_server const& from)
   {
      for (std::size_t i = 0; i < group_.size(); ++i)
         if (group_.master(i).port() == from.port())
            return group_.master((i + 1) % group_.size());
      throw std::runtime_error("no master on port " + std::to_string(from.port()));
   }

   double move_by_hand(std::uint16_t slot, std::function<void()> const& begin)
   {
      auto& from = view_.owner(slot);
      auto& to = next_master(from);
      auto const s = std::to_string(slot);
      begin();
      auto const t0 = clock_type::now();
      expect_status(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", view_.id(from)});
      expect_status(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", view_.id(to)});
      for (;;) {
         auto const keys =
            from.command({"CLUSTER", "GETKEYSINSLOT", s, std::to_string(x_.batch)}, 10s);
         if (keys.type != test::reply::kind::array)
            throw std::runtime_error("CLUSTER GETKEYSINSLOT failed: " + keys.str);
         if (keys.elements.empty())
            break;
         std::vector<std::string> migrate{
            "MIGRATE", "127.0.0.1", std::to_string(to.port()), "", "0", "5000", "KEYS"};
         for (auto const& key : keys.elements)
            migrate.push_back(key.str);
         expect_status(from, migrate);
      }
      // The new owner first, as redis-cli does, so that its epoch wins; then every master.
      expect_status(to, {"CLUSTER", "SETSLOT", s, "NODE", view_.id(to)});
      for (std::size_t i = 0; i < group_.size(); ++i)
         if (group_.master(i).port() != to.port())
            expect_status(group_.master(i), {"CLUSTER", "SETSLOT", s, "NODE", view_.id(to)});
      return ms_since(t0);
   }

   // The stock tool: it moves the source's lowest slots, which are the two of the names.
   double reshard(std::function<void()> const& begin)
   {
      auto& from = view_.owner(moved_slots[0]);
      auto& to = next_master(from);
      begin();
      auto const t0 = clock_type::now();
      auto const out =
         run_command({"redis-cli", "--cluster", "reshard",
                      "127.0.0.1:" + std::to_string(from.port()), "--cluster-from", view_.id(from),
                      "--cluster-to", view_.id(to), "--cluster-slots", "2", "--cluster-yes"});
      auto const took = ms_since(t0);
      if (out.status != 0)
         throw std::runtime_error(
            "redis-cli --cluster reshard failed: " +
            out.text.substr(out.text.size() > 400 ? out.text.size() - 400 : 0));
      for (auto slot : moved_slots)
         if (view_.owner(slot).port() != to.port())
            throw std::runtime_error("redis-cli --cluster reshard did not move slot " +
                                     std::to_string(slot));
      return took;
   }

   // kill -9 of the names' master; once its replica is promoted (not before: it would come back
   // empty as the slots' master), the old master comes back, empty, with its cluster config,
   // and rejoins as the new master's replica. The operation lasts until that replica has synced:
   // until then a master has no replica, and grants with wait_replicas = 1 cannot be made.
   double kill_master(std::function<void()> const& begin)
   {
      auto& old = view_.owner(moved_slots[0]);
      auto& next = view_.replica_of(old);
      begin();
      auto const t0 = clock_type::now();
      old.kill();
      if (!test::wait_until([&] { return view_.is_master(next); }, 60s))
         throw std::runtime_error("no replica was promoted within 60 s of the kill");
      promoted_ms_.push_back(ms_since(t0));
      old.restart();
      settle();
      return ms_since(t0);
   }

   // CLUSTER FAILOVER on the names' master's replica: the two swap roles, with no write lost.
   double manual_failover(std::function<void()> const& begin)
   {
      auto& old = view_.owner(moved_slots[0]);
      auto& next = view_.replica_of(old);
      begin();
      auto const t0 = clock_type::now();
      // A manual failover that does not complete in time (the replica did not catch up on a
      // loaded machine) is given up by Redis; an operator runs it again.
      for (int attempt = 0; attempt < 3; ++attempt) {
         expect_status(next, {"CLUSTER", "FAILOVER"});
         if (test::wait_until([&] { return view_.is_master(next); }, 10s))
            return ms_since(t0);
         ++failover_retries_;
      }
      throw std::runtime_error("3 CLUSTER FAILOVERs did not promote the replica within 10 s");
   }

   std::string name_;
   ops_options x_;
   bool failover_;
   test::cluster_group group_;
   cluster_view view_;
   std::vector<double> promoted_ms_;
   long failover_retries_ = 0;
};

}  // namespace

std::unique_ptr<scenario> make_cluster_scenario(std::string const& name, chaos_options& o,
                                                ops_options const& x)
{
   return std::make_unique<cluster_ops>(name, o, x);
}

}  // namespace locksmith::bench
