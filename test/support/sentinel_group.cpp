#include "support/sentinel_group.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace locksmith::test {
namespace {

using namespace std::chrono_literals;

// Quick enough for a test (a failover in a few seconds), slow enough that a loaded CI machine
// does not fail over a healthy master.
constexpr int down_after_ms = 1000;
constexpr int failover_timeout_ms = 3000;

std::string sentinel_config(temp_dir const& dir, int i, std::uint16_t master_port)
{
   auto const path = dir.file("sentinel" + std::to_string(i) + ".conf");
   std::ofstream out{path};
   std::string const name = sentinel_group::master_name;
   out << "sentinel monitor " << name << " 127.0.0.1 " << master_port << " 2\n"
       << "sentinel down-after-milliseconds " << name << " " << down_after_ms << "\n"
       << "sentinel failover-timeout " << name << " " << failover_timeout_ms << "\n"
       << "dir " << dir.path.string() << "\n";
   if (!out.flush())
      throw std::runtime_error("cannot write " + path);
   return path;
}

// Each server has a directory of its own: after a failover either may write a dump.rdb.
std::string subdir(temp_dir const& dir, std::string const& name)
{
   auto const path = dir.path / name;
   std::filesystem::create_directory(path);
   return path.string();
}

}  // namespace

bool has_text(std::string const& text, std::string const& what)
{
   return text.find(what) != std::string::npos;
}

namespace {

// True when the INFO sentinel of every Sentinel holds `what`.
bool every_sentinel_says(std::vector<std::unique_ptr<redis_server>> const& sentinels,
                         std::string const& what)
{
   for (auto const& s : sentinels)
      if (!has_text(info_section(*s, "sentinel"), what))
         return false;
   return true;
}

}  // namespace

std::string info_section(redis_server const& s, std::string_view section)
{
   return s.text({"INFO", section});
}

std::vector<std::string> master_args(std::string const& dir)
{
   return {"--repl-diskless-sync-delay", "0", "--dir", dir};
}

std::vector<std::string> replica_of(redis_server const& master, std::string const& dir)
{
   return {"--replicaof", "127.0.0.1", std::to_string(master.port()), "--dir", dir};
}

sentinel_group::sentinel_group()
    : master_{master_args(subdir(dir_, "master"))}
    , replica_{replica_of(master_, subdir(dir_, "replica"))}
{
   // The Sentinels learn of the replica from the master's INFO, once it is in sync.
   if (!wait_until(
          [this] {
             return has_text(info_section(replica_, "replication"), "master_link_status:up");
          },
          10s))
      throw std::runtime_error("the replica did not sync with its master within 10 s");
   for (int i = 0; i < 3; ++i)
      sentinels_.push_back(std::make_unique<redis_server>(
         std::vector<std::string>{"--sentinel"}, sentinel_config(dir_, i, master_.port())));
   // The Sentinels find each other through the hello messages they publish every 2 s.
   if (!wait_until([this] { return ready(); }, 20s))
      throw std::runtime_error("the Sentinels did not find the replica and each other within 20 s");
}

bool sentinel_group::ready() const
{
   return ready_with_master(master_.port());
}

bool sentinel_group::ready_with_master(std::uint16_t port) const
{
   return every_sentinel_says(sentinels_, "address=127.0.0.1:" + std::to_string(port) +
                                             ",slaves=1,sentinels=3");
}

std::string sentinel_group::url() const
{
   std::string u = "redis+sentinel://";
   for (auto const& s : sentinels_)
      u += (s == sentinels_.front() ? "" : ",") + std::string{"127.0.0.1:"} +
           std::to_string(s->port());
   return u + "/" + master_name;
}

bool sentinel_group::names_master(std::uint16_t port) const
{
   return every_sentinel_says(sentinels_, "address=127.0.0.1:" + std::to_string(port) + ",");
}

void sentinel_group::cut_replica_link()
{
   // The master has no password, so any AUTH the replica sends it fails, and it stays out.
   replica_.command({"CONFIG", "SET", "masterauth", "not-this-one"});
   master_.command({"CLIENT", "KILL", "TYPE", "replica"});
   if (!wait_until(
          [this] { return has_text(info_section(master_, "replication"), "connected_slaves:0"); },
          5s))
      throw std::runtime_error("the master kept its replica");
}

}  // namespace locksmith::test
