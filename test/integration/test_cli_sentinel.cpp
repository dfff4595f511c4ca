// `locksmith exec --redis redis+sentinel://...` against a real master that three Sentinels
// manage: the tool asks them for the master, and the command runs under the lock, whose key is
// on that master while the command runs and gone after.
#include "cli.hpp"

#include "support/sentinel_group.hpp"

namespace test_cli_sentinel {

BOOST_AUTO_TEST_SUITE(cli_sentinel, *needs_redis_server())

BOOST_AUTO_TEST_CASE(exec_locks_on_the_master_that_the_sentinels_name, *utf::timeout(90))
{
   locksmith::test::sentinel_group group;
   temp_dir dir;
   auto const key = unique_key();
   auto const ready = dir.file("ready"), go = dir.file("go"), token = dir.file("token");
   std::vector<std::string> args{"exec", "--redis",        group.url(), "--key",
                                 key,    "--node-timeout", "1s",        "--"};
   for (auto& word : shell("printf %s \"$LOCKSMITH_FENCING_TOKEN\" > \"$3\"; touch \"$1\"; "
                           "while [ ! -e \"$2\" ]; do sleep 0.01; done",
                           {ready, go, token}))
      args.push_back(std::move(word));
   cli_process holder{args};
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(ready); }), holder.err());
   // Held on the master while the command runs: its key there, and the fence that the command
   // was given.
   BOOST_TEST(key_exists(group.master(), key));
   auto const fence = read_file(token);
   BOOST_TEST(!fence.empty());
   BOOST_TEST(group.master().text({"GET", lock_key(key) + ":fence"}) == fence);
   create_file(go);
   BOOST_TEST(holder.wait() == 0, holder.err());
   BOOST_TEST(!key_exists(group.master(), key));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_sentinel
