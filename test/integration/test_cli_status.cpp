// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// `locksmith status` run as a process against real redis-servers: every kind (held by `exec`
// processes, and a reentrant lock by a client of this test), held (exit 0) and free (exit 1), as
// text and as JSON, on 1 and 5 nodes and on a Redis Cluster; usage errors (64) and a node that
// does not answer (69).
#include "cli.hpp"

#include "support/cluster_group.hpp"
#include "support/config.hpp"
#include "support/run.hpp"
#include "support/server_checks.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <memory>

namespace test_cli_status {

namespace {

std::vector<std::string> with_nodes(std::vector<std::string> args,
                                    std::vector<std::string> const& urls)
{
   for (auto const& u : urls) {
      args.push_back("--redis");
      args.push_back(u);
   }
   return args;
}

struct answer {
   int code;
   std::string out;
   std::string err;
};

// `locksmith status --redis URL... --key KEY --node-timeout TIMEOUT [extra...]`
answer status(std::vector<std::string> const& urls, std::string const& key,
              std::vector<std::string> const& extra = {}, std::string const& timeout = "1s")
{
   auto args = with_nodes({"status"}, urls);
   for (auto const& a : {std::string{"--key"}, key, std::string{"--node-timeout"}, timeout})
      args.push_back(a);
   args.insert(args.end(), extra.begin(), extra.end());
   cli_process p{args};
   int const code = p.wait();
   return {code, p.out(), p.err()};
}

bool says(answer const& a, std::string const& text)
{
   return a.out.find(text) != std::string::npos;
}

// An `exec` that holds the key (with `options`) until finish().
struct holder {
   temp_dir dir;
   std::unique_ptr<cli_process> p;

   holder(std::vector<std::string> const& urls, std::string const& key,
          std::vector<std::string> const& options)
   {
      auto args = with_nodes({"exec"}, urls);
      args.push_back("--key");
      args.push_back(key);
      args.insert(args.end(), options.begin(), options.end());
      args.push_back("--");
      for (auto const& c : hold_until(dir))
         args.push_back(c);
      p = std::make_unique<cli_process>(args);
   }
   bool ready() const
   {
      return poll_until([&] { return exists(dir.file("ready")); }, 20s);
   }
   void finish()
   {
      create_file(dir.file("go"));
      BOOST_TEST(p->wait() == 0, p->err());
   }
};

// exec's default holder label: <hostname>:<pid> of the exec process.
std::string default_owner(cli_process const& exec)
{
   char host[256] = {};
   ::gethostname(host, sizeof host - 1);
   return std::string{host} + ":" + std::to_string(exec.pid());
}

// Holds the key with `options`, and checks what status says of it: exit 0, the kind's line,
// and the holder with exec's default label (on the quorum's line and in the JSON).
void held_as(std::vector<std::string> const& urls, std::vector<std::string> const& options,
             std::string const& kind_line)
{
   auto const key = unique_key();
   holder h{urls, key, options};
   BOOST_TEST_REQUIRE(h.ready(), h.p->err());
   auto const text = status(urls, key);
   BOOST_TEST(text.code == 0, text.out << text.err);
   BOOST_TEST(says(text, kind_line), text.out);
   auto const who = default_owner(*h.p);
   BOOST_TEST(says(text, " by " + who + " ("), text.out);
   auto const json = status(urls, key, {"--json"});
   BOOST_TEST(json.code == 0, json.err);
   BOOST_TEST(says(json, "\"held\":true"), json.out);
   BOOST_TEST(says(json, "\"owner\":\"" + who + "\"}"), json.out);
   h.finish();
   // Free once the release reached every node (it completes at a quorum).
   answer after{};
   BOOST_TEST(poll_until([&] {
                 after = status(urls, key);
                 return after.code == 1 && !says(after, "held");
              }),
              after.out << after.err);
}

// Every kind that exec takes, held and free, then a fair lock with a waiter.
void every_kind(std::vector<std::string> const& urls)
{
   auto const free_key = unique_key();
   auto const free = status(urls, free_key);
   BOOST_TEST(free.code == 1, free.out << free.err);
   BOOST_TEST(says(free, free_key + ": none, free"), free.out);
   auto const json = status(urls, free_key, {"--json"});
   BOOST_TEST(json.code == 1);
   BOOST_TEST(says(json, "{\"name\":\"" + free_key + "\",\"kind\":\"none\",\"held\":false"),
              json.out);

   held_as(urls, {}, ": lock, held");
   held_as(urls, {"--permits", "3"}, ": semaphore, held");
   held_as(urls, {"--shared"}, ": read-write, held");

   auto const key = unique_key();
   holder h{urls, key, {"--fair", "--ttl", "30s"}};
   BOOST_TEST_REQUIRE(h.ready(), h.p->err());
   auto waiter = with_nodes({"exec"}, urls);
   for (auto const& a : {"--key", key.c_str(), "--fair", "--wait", "60s", "--", "true"})
      waiter.push_back(a);
   cli_process next{waiter};
   answer queued{};
   // The waiter queues on its first try: status shows it.
   BOOST_TEST(poll_until([&] {
                 queued = status(urls, key);
                 return says(queued, ": fair, held") && says(queued, "waiter ");
              }),
              queued.out << queued.err);
   BOOST_TEST(queued.code == 0);
   h.finish();
   BOOST_TEST(next.wait() == 0, next.err());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_status, *needs_redis_server())

BOOST_AUTO_TEST_CASE(every_kind_on_one_node, *utf::timeout(180))
{
   redis_server srv;
   every_kind({srv.url()});
   // A reentrant lock, held by a client of this test while status runs.
   boost::asio::io_context ioc;
   locksmith::client c{ioc.get_executor(), locksmith::test::test_config({srv.url()})};
   auto const key = unique_key();
   locksmith::test::run(ioc, [&]() -> boost::asio::awaitable<void> {
      auto l = co_await c.async_lock_reentrant(key, "status-owner", {.ttl = 30s});
      auto const a = status({srv.url()}, key);
      BOOST_TEST(a.code == 0, a.err);
      BOOST_TEST(says(a, ": reentrant, held"), a.out);
      BOOST_TEST(says(a, "    hold " + l.token()), a.out);
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_CASE(every_kind_on_five_nodes, *utf::timeout(300))
{
   std::vector<std::unique_ptr<redis_server>> servers;
   std::vector<std::string> urls;
   for (int i = 0; i < 5; ++i) {
      servers.push_back(std::make_unique<redis_server>());
      urls.push_back(servers.back()->url());
   }
   every_kind(urls);
   // Three nodes frozen: no quorum answers (69), and each frozen node's line says why.
   auto const key = unique_key();
   for (int i = 2; i < 5; ++i)
      servers[i]->pause();
   auto const a = status(urls, key, {}, "200ms");
   for (int i = 2; i < 5; ++i)
      servers[i]->resume();
   BOOST_TEST(a.code == 69, a.out << a.err);
   BOOST_TEST(says(a, "no answer"), a.out);
}

BOOST_AUTO_TEST_CASE(every_kind_on_a_cluster,
                     *utf::timeout(300) * locksmith::test::needs_cluster_server())
{
   locksmith::test::cluster_group cluster;
   every_kind({cluster.url()});
}

// --owner LABEL is shown as given; --owner '' stores none (JSON null); a label that is too long
// or holds a control character is a usage error (64), before any lock is taken.
BOOST_AUTO_TEST_CASE(owner_is_shown_as_given, *utf::timeout(120))
{
   redis_server srv;
   auto const key = unique_key();
   {
      holder h{{srv.url()}, key, {"--owner", "nightly report@web-1"}};
      BOOST_TEST_REQUIRE(h.ready(), h.p->err());
      auto const text = status({srv.url()}, key);
      BOOST_TEST(says(text, " by nightly report@web-1 ("), text.out);
      auto const json = status({srv.url()}, key, {"--json"});
      BOOST_TEST(says(json, "\"owner\":\"nightly report@web-1\"}"), json.out);
      h.finish();
   }
   {
      holder h{{srv.url()}, key, {"--owner", ""}};
      BOOST_TEST_REQUIRE(h.ready(), h.p->err());
      auto const text = status({srv.url()}, key);
      BOOST_TEST(text.code == 0, text.err);
      BOOST_TEST(!says(text, " by "), text.out);
      auto const json = status({srv.url()}, key, {"--json"});
      BOOST_TEST(says(json, "\"owner\":null}"), json.out);
      h.finish();
   }
   for (auto const& bad : {std::string(257, 'o'), std::string{"two\nlines"}}) {
      cli_process p{exec_args(srv, key, {"--owner", bad}, {"true"})};
      BOOST_TEST(p.wait() == 64, p.err());
      BOOST_TEST(p.err().find("--owner") != std::string::npos, p.err());
   }
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(bad_input_exits_64_and_a_dead_node_69, *utf::timeout(60))
{
   redis_server srv;
   std::vector<std::vector<std::string>> bad = {
      {"status", "--redis", srv.url(), "--key", ""},
      {"status", "--redis", srv.url()},  // no --key
      {"status", "--redis", "http://127.0.0.1:6379", "--key", "k"},
      {"status", "--redis", srv.url(), "--key", "k", "--node-timeout", "soon"},
      {"status", "--redis", srv.url(), "--key", "k", "--bogus"},
   };
   for (auto const& args : bad) {
      cli_process p(args);
      BOOST_TEST(p.wait() == 64, args.back() << "; stderr: " << p.err());
      BOOST_TEST(p.err().rfind("locksmith: ", 0) == 0u, p.err());
   }
   // A port where nothing listens.
   cli_process dead(
      {"status", "--redis", "redis://127.0.0.1:1", "--key", "k", "--node-timeout", "300ms"});
   BOOST_TEST(dead.wait() == 69, dead.out() << dead.err());
   cli_process help({"status", "--help"});
   BOOST_TEST(help.wait() == 0);
   for (auto text : {"--json", "64", "69", "77", "held", "free"})
      BOOST_TEST(help.out().find(text) != std::string::npos, text << " not in --help");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_status
