// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// sentinel-failover: `SENTINEL FAILOVER` of a master with one replica and three Sentinels
// (test/support/sentinel_group.hpp), under load; the two servers swap roles at each operation.
#include "operations.hpp"

#include "support/sentinel_group.hpp"

#include <stdexcept>

namespace locksmith::bench {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

class sentinel_ops final : public scenario {
public:
   std::vector<std::string> worker_nodes() const override { return {group_.url()}; }
   std::vector<std::string> check_urls() const override
   {
      return {(master_is_first() ? group_.master() : group_.replica()).url()};
   }
   // The old master takes writes until the Sentinels demote it, and they are lost then.
   bool keeps_leases() const override { return false; }

   double operate(int, std::function<void()> const& begin) override
   {
      auto& next = master_is_first() ? group_.replica() : group_.master();
      begin();
      auto const t0 = clock_type::now();
      auto const r =
         group_.sentinel(0).command({"SENTINEL", "FAILOVER", test::sentinel_group::master_name});
      if (r.type != test::reply::kind::status)
         throw std::runtime_error("SENTINEL FAILOVER failed: " + r.str);
      if (!test::wait_until([&] { return group_.names_master(next.port()); }, 30s))
         throw std::runtime_error("the Sentinels did not name the replica within 30 s");
      return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
   }

   void settle() override
   {
      auto& now = master_is_first() ? group_.master() : group_.replica();
      auto& old = master_is_first() ? group_.replica() : group_.master();
      // The Sentinels list the old master as a replica as soon as they switch, seconds before
      // they demote it: the next failover must wait until it really is one, in sync.
      auto const demoted = [&] {
         auto const r = test::info_section(old, "replication");
         return r.find("role:slave") != r.npos && r.find("master_link_status:up") != r.npos;
      };
      if (!test::wait_until([&] { return group_.ready_with_master(now.port()) && demoted(); }, 60s))
         throw std::runtime_error("the old master did not rejoin as a replica within 60 s");
   }

   std::string json_fields() const override { return ",\"sentinels\":3,\"replicas\":1"; }

private:
   bool master_is_first() const { return group_.names_master(group_.master().port()); }

   mutable test::sentinel_group group_;
};

}  // namespace

std::unique_ptr<scenario> make_sentinel_failover(chaos_options&, ops_options const&)
{
   return std::make_unique<sentinel_ops>();
}

}  // namespace locksmith::bench
