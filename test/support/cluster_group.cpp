#include "support/cluster_group.hpp"

#include "support/sentinel_group.hpp"

#include <sstream>
#include <stdexcept>

namespace locksmith::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint16_t slots = 16384;

void expect_ok(redis_server const& s, std::vector<std::string> const& args)
{
   auto const r = s.command(args);
   if (r.type != reply::kind::status)
      throw std::runtime_error(args.front() + " " + args.at(1) + " failed on port " +
                               std::to_string(s.port()) + ": " + r.str);
}

}  // namespace

cluster_group::cluster_group(std::size_t n)
    : cluster_group(n, false)
{}

std::unique_ptr<redis_server> cluster_group::start_node(std::string const& name,
                                                        std::string const& node_timeout)
{
   auto const file = dir_.file("nodes-" + name + ".conf");
   // A replica syncs at once, as sentinel_group's do: Redis's default waits 5 s for more
   // replicas before a full sync, and a master restarted after a failover rejoins with one.
   return std::make_unique<redis_server>(std::vector<std::string>{
      "--cluster-enabled", "yes", "--cluster-config-file", file, "--cluster-node-timeout",
      node_timeout, "--dbfilename", "dump-" + name + ".rdb", "--dir", dir_.path.string(),
      "--repl-diskless-sync-delay", "0"});
}

cluster_group::cluster_group(std::size_t n, bool with_replicas, std::chrono::milliseconds timeout)
{
   // Without replicas, a long node timeout: a loaded machine must not see a master fail. With
   // them, a short one, so that a killed master fails over quickly.
   auto const node_timeout = timeout > timeout.zero() ? std::to_string(timeout.count())
                             : with_replicas          ? std::string{"1500"}
                                                      : std::string{"15000"};
   for (std::size_t i = 0; i < n; ++i)
      masters_.push_back(start_node(std::to_string(i), node_timeout));
   if (with_replicas)
      for (std::size_t i = 0; i < n; ++i)
         replicas_.push_back(start_node("r" + std::to_string(i), node_timeout));
   for (std::size_t i = 0; i < n; ++i) {
      // Each slot named (ADDSLOTSRANGE is Redis 7.0's): the matrix's Redis 6 forms clusters too.
      std::vector<std::string> add{"CLUSTER", "ADDSLOTS"};
      for (auto s = slots * i / n; s < slots * (i + 1) / n; ++s)
         add.push_back(std::to_string(s));
      expect_ok(*masters_[i], add);
   }
   for (std::size_t i = 1; i < n; ++i)
      expect_ok(*masters_[0],
                {"CLUSTER", "MEET", "127.0.0.1", std::to_string(masters_[i]->port())});
   for (auto const& r : replicas_)
      expect_ok(*masters_[0], {"CLUSTER", "MEET", "127.0.0.1", std::to_string(r->port())});
   if (!wait_until([this] { return ready(); }, 20s))
      throw std::runtime_error("the cluster did not reach cluster_state:ok within 20 s");
   for (std::size_t i = 0; i < replicas_.size(); ++i) {
      auto const master_id = id(i);
      // A replica may only replicate a node it knows of.
      auto const knows = [&] {
         return has_text(replicas_[i]->command({"CLUSTER", "NODES"}).str, master_id);
      };
      if (!wait_until(knows, 20s))
         throw std::runtime_error("a replica did not learn of its master within 20 s");
      expect_ok(*replicas_[i], {"CLUSTER", "REPLICATE", master_id});
   }
   if (!wait_until([this] { return replicas_ready(); }, 30s))
      throw std::runtime_error("the replicas did not sync with their masters within 30 s");
}

bool cluster_group::replicas_ready() const
{
   for (std::size_t i = 0; i < replicas_.size(); ++i) {
      auto const repl = replicas_[i]->text({"INFO", "replication"});
      if (!has_text(repl, "role:slave") || !has_text(repl, "master_link_status:up"))
         return false;
      // Every master sees the replica as the replica of its master.
      auto const line = "slave " + id(i);
      for (auto const& m : masters_)
         if (!has_text(m->command({"CLUSTER", "NODES"}).str, line))
            return false;
   }
   return true;
}

std::vector<std::string> cluster_group::live_masters(redis_server const& s)
{
   std::vector<std::string> ids;
   std::istringstream lines{s.command({"CLUSTER", "NODES"}).str};
   // <id> <ip:port@cport> <flags> <master> ...
   for (std::string line; std::getline(lines, line);) {
      std::istringstream fields{line};
      std::string id, addr, flags;
      fields >> id >> addr >> flags;
      if (has_text(flags, "master") && !has_text(flags, "fail"))
         ids.push_back(id);
   }
   return ids;
}

bool cluster_group::ready() const
{
   auto const known = "cluster_known_nodes:" + std::to_string(masters_.size() + replicas_.size());
   for (auto const& m : masters_) {
      auto const info = m->text({"CLUSTER", "INFO"});
      if (!has_text(info, "cluster_state:ok") || !has_text(info, known))
         return false;
   }
   return true;
}

std::string cluster_group::url() const
{
   std::string u = "redis+cluster://";
   for (auto const& m : masters_)
      u +=
         (m == masters_.front() ? "" : ",") + std::string{"127.0.0.1:"} + std::to_string(m->port());
   return u;
}

std::size_t cluster_group::first_owner(std::uint16_t slot) const
{
   return static_cast<std::size_t>(slot) * masters_.size() / slots;
}

std::string cluster_group::id(std::size_t i) const
{
   return masters_.at(i)->text({"CLUSTER", "MYID"});
}

void cluster_group::start_migration(std::uint16_t slot, std::size_t from, std::size_t to)
{
   mark_migration(slot, from, to);
   migrate_keys(slot, from, to);
}

void cluster_group::mark_migration(std::uint16_t slot, std::size_t from, std::size_t to)
{
   auto const s = std::to_string(slot);
   expect_ok(*masters_.at(to), {"CLUSTER", "SETSLOT", s, "IMPORTING", id(from)});
   expect_ok(*masters_.at(from), {"CLUSTER", "SETSLOT", s, "MIGRATING", id(to)});
}

void cluster_group::migrate_keys(std::uint16_t slot, std::size_t from, std::size_t to,
                                 std::vector<std::string> const& keys)
{
   std::vector<std::string> migrate{
      "MIGRATE", "127.0.0.1", std::to_string(masters_.at(to)->port()), "", "0", "5000", "KEYS"};
   migrate.insert(migrate.end(), keys.begin(), keys.end());
   if (keys.empty()) {
      auto const left =
         masters_.at(from)->command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100000"});
      if (left.type != reply::kind::array)
         throw std::runtime_error("CLUSTER GETKEYSINSLOT failed: " + left.str);
      for (auto const& k : left.elements)
         migrate.push_back(k.str);
   }
   if (migrate.size() > 7)
      expect_ok(*masters_[from], migrate);
}

void cluster_group::end_migration(std::uint16_t slot, std::size_t to)
{
   auto const s = std::to_string(slot);
   auto const owner = id(to);
   // The new owner first, as redis-cli does, so that its epoch wins.
   expect_ok(*masters_.at(to), {"CLUSTER", "SETSLOT", s, "NODE", owner});
   for (std::size_t i = 0; i < masters_.size(); ++i)
      if (i != to)
         expect_ok(*masters_[i], {"CLUSTER", "SETSLOT", s, "NODE", owner});
}

}  // namespace locksmith::test
