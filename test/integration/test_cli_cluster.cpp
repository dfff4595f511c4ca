// `locksmith exec --redis redis+cluster://...` against a real three-master Redis Cluster: the
// command runs under the lock, whose keys are on the master of the name's slot.
#include "cli.hpp"

#include "support/cluster_group.hpp"
#include "support/server_checks.hpp"

#include "sansio/cluster.hpp"

#include <fstream>

namespace test_cli_cluster {

BOOST_AUTO_TEST_SUITE(cli_cluster, *needs_redis_server() * locksmith::test::needs_cluster_server())

BOOST_AUTO_TEST_CASE(exec_locks_on_the_master_of_the_slot, *utf::timeout(90))
{
   locksmith::test::cluster_group cluster;
   temp_dir dir;
   for (std::size_t i = 0; i < cluster.size(); ++i) {
      std::string key;
      for (int k = 0;; ++k) {
         key = unique_key() + "/" + std::to_string(k);
         if (cluster.first_owner(locksmith::detail::hash_slot(lock_key(key))) == i)
            break;
      }
      auto const file = dir.file("token" + std::to_string(i));
      std::vector<std::string> args{"exec",
                                    "--redis",
                                    cluster.url(),
                                    "--key",
                                    key,
                                    "--node-timeout",
                                    "1s",
                                    "--",
                                    "sh",
                                    "-c",
                                    "printf %s \"$LOCKSMITH_FENCING_TOKEN\" > \"$1\"",
                                    "sh",
                                    file};
      cli_process p{args};
      BOOST_TEST_REQUIRE(p.wait() == 0, p.err());
      std::ifstream in{file};
      std::string token;
      in >> token;
      BOOST_TEST(!token.empty());
      // The fence key stays, on the master of the slot; the lock key is gone.
      BOOST_TEST(cluster.master(i).text({"GET", lock_key(key) + ":fence"}) == token);
      BOOST_TEST(!key_exists(cluster.master(i), key));
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_cluster
