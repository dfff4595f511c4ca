// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// `locksmith exec --permits N`, `--shared` and `--exclusive`, run as processes against a real
// redis-server: the semaphore's bound, readers beside readers, a writer after them, the usage
// errors, and the help text.
#include "cli.hpp"

BOOST_AUTO_TEST_SUITE(cli_primitives, *needs_redis_server())

BOOST_AUTO_TEST_CASE(two_permits_run_two_commands_and_refuse_a_third, *utf::timeout(60))
{
   redis_server srv;
   temp_dir first, second;
   auto key = unique_key();
   cli_process a(exec_args(srv, key, {"--permits", "2"}, hold_until(first)));
   cli_process b(exec_args(srv, key, {"--permits", "2"}, hold_until(second)));
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(first.file("ready")); }), a.err());
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(second.file("ready")); }), b.err());
   BOOST_TEST(srv.text({"ZCARD", lock_key(key)}) == "2");
   cli_process third(exec_args(srv, key, {"--permits", "2", "--wait", "100ms"}, {"true"}));
   BOOST_TEST(third.wait() == 75);
   create_file(first.file("go"));
   BOOST_TEST(a.wait() == 0);
   BOOST_TEST(
      cli_process(exec_args(srv, key, {"--permits", "2", "--wait", "0ms"}, {"true"})).wait() == 0);
   create_file(second.file("go"));
   BOOST_TEST(b.wait() == 0);
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(readers_run_together_and_a_writer_after_them, *utf::timeout(60))
{
   redis_server srv;
   temp_dir first, second, writer;
   auto key = unique_key();
   cli_process a(exec_args(srv, key, {"--shared"}, hold_until(first)));
   cli_process b(exec_args(srv, key, {"--shared"}, hold_until(second)));
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(first.file("ready")); }), a.err());
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(second.file("ready")); }), b.err());
   BOOST_TEST(
      cli_process(exec_args(srv, key, {"--exclusive", "--wait", "100ms"}, {"true"})).wait() == 75);
   cli_process w(exec_args(srv, key, {"--exclusive", "--wait", "20s"}, hold_until(writer)));
   create_file(first.file("go"));
   create_file(second.file("go"));
   BOOST_TEST(a.wait() == 0);
   BOOST_TEST(b.wait() == 0);
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(writer.file("ready")); }), w.err());
   BOOST_TEST(cli_process(exec_args(srv, key, {"--shared", "--wait", "100ms"}, {"true"})).wait() ==
              75);
   create_file(writer.file("go"));
   BOOST_TEST(w.wait() == 0);
}

BOOST_AUTO_TEST_CASE(the_primitives_exclude_each_other_and_are_documented, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   for (auto const& bad : std::vector<std::vector<std::string>>{
           {"--permits", "2", "--shared"}, {"--shared", "--exclusive"}, {"--permits", "0"}})
      BOOST_TEST(cli_process(exec_args(srv, key, bad, {"true"})).wait() == 64);
   cli_process help({"exec", "--help"});
   BOOST_TEST(help.wait() == 0);
   for (auto const* flag : {"--permits", "--shared", "--exclusive"})
      BOOST_TEST(help.out().find(flag) != std::string::npos, flag);
}

BOOST_AUTO_TEST_SUITE_END()
