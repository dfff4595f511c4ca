// A master that Sentinels manage, for the integration tests: one master, one replica of it, and
// three Sentinels (quorum 2) that fail it over about a second after it stops answering. Every
// process is a redis_server on its own free loopback port; the Sentinels' config files live in a
// temporary directory. No Boost.Test here.
#pragma once

#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace locksmith::test {

class sentinel_group {
public:
   /// The name the Sentinels monitor the master by.
   static constexpr char const* master_name = "mymaster";

   /// Starts the master, then its replica, then the Sentinels, and waits (at most 20 s) until
   /// a failover could happen: the replica is in sync and every Sentinel knows the replica and
   /// the two other Sentinels. Throws std::runtime_error otherwise.
   sentinel_group();

   redis_server& master() { return master_; }
   redis_server& replica() { return replica_; }

   /// `redis+sentinel://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>/mymaster`.
   std::string url() const;

   /// True when every Sentinel names the server on `port` as the master.
   bool names_master(std::uint16_t port) const;

   /// True when every Sentinel names the server on `port` as the master, with one replica and
   /// the two other Sentinels known: a failover could happen again.
   bool ready_with_master(std::uint16_t port) const;

   /// Sentinel i of 3, e.g. for `SENTINEL FAILOVER mymaster`.
   redis_server& sentinel(std::size_t i) { return *sentinels_.at(i); }

   /// Cuts the replica off its master for good, while both keep running: the replica's next
   /// authentication to the master is made to fail, then the master drops its link. Returns
   /// once the master has no replica, so that no later write reaches it.
   void cut_replica_link();

private:
   bool ready() const;

   temp_dir dir_{"locksmith-sentinel"};
   redis_server master_;
   redis_server replica_;
   std::vector<std::unique_ptr<redis_server>> sentinels_;
};

/// The arguments of a master whose replicas sync at once (repl-diskless-sync-delay 0), and which
/// keeps what it writes (dump.rdb, when it becomes a replica) in `dir`, not in the working
/// directory.
std::vector<std::string> master_args(std::string const& dir);

/// The arguments of a replica of `master`, which keeps the copy it syncs in `dir`.
std::vector<std::string> replica_of(redis_server const& master, std::string const& dir);

/// `INFO <section>` of a server, as text.
std::string info_section(redis_server const& s, std::string_view section);
/// Whether `what` appears in `text` (an INFO section, CLUSTER NODES).
bool has_text(std::string const& text, std::string const& what);

/// Waits (blocking) until `pred()` holds, for at most `deadline`; false if it never did.
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds deadline)
{
   auto const until = std::chrono::steady_clock::now() + deadline;
   while (!pred()) {
      if (std::chrono::steady_clock::now() >= until)
         return false;
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
   }
   return true;
}

}  // namespace locksmith::test
