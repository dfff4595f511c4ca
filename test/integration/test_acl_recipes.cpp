// The ACL recipes of docs/operations.md (issue 28), each read from the page (readme_acl.hpp) and
// run through a user with exactly the first recipe's rules and those of the use: every primitive
// taken, renewed, waited for, handed over and released; a lock through Sentinel, with
// wait_replicas, on a database other than 0, and on a Redis Cluster. After each, the servers'
// ACL LOG must be empty: no command of any path was denied, not even one whose failure the
// library would have survived. The first recipe alone is tested by the `acl` suite.
#include "cluster_fixture.hpp"
#include "readme_acl.hpp"
#include "support/integration.hpp"
#include "support/sentinel_group.hpp"
#include "support/server_checks.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace test_acl_recipes {

namespace {

namespace lt = locksmith::test;
constexpr char const* password = "recipe-Pa55";

// The user `name` with exactly `rules` (ACL SETUSER name reset rules...).
void add_user(redis_server& s, std::string const& name, std::vector<std::string> const& rules)
{
   std::vector<std::string> args{"ACL", "SETUSER", name, "reset"};
   args.insert(args.end(), rules.begin(), rules.end());
   auto const r = s.command(args);
   BOOST_REQUIRE_MESSAGE(r.type == lt::reply::kind::status, r.str);
}

// `url` with `user:password@` after its scheme.
std::string as_user(std::string url, std::string const& user)
{
   url.insert(url.find("://") + 3, user + ":" + password + "@");
   return url;
}

using acquire_result = std::tuple<error_code, lease>;
using acquire_fn =
   std::function<asio::awaitable<acquire_result>(locksmith::client&, locksmith::report&)>;

locksmith::lock_options const opts{.ttl = 10s, .wait = 10s};

// What hand_over runs: the holder's acquisition, and the waiter's (the same, or another side).
struct primitive {
   std::string what;
   acquire_fn holder;
   acquire_fn waiter = holder;
};

// The holder takes the lease and renews it, the waiter waits for it meanwhile, the holder
// releases it and the waiter gets it: the acquire, extend, release and waiting paths of one
// primitive, through the clients' users.
asio::awaitable<void> hand_over(locksmith::client& a, locksmith::client& b, primitive p)
{
   locksmith::report da;
   auto [ec, first] = co_await p.holder(a, da);
   BOOST_TEST_REQUIRE(!ec, p.what << ": " << ec.message() << " " << da.message());
   auto [xec] = co_await a.async_extend(first, 10s, tuple);
   BOOST_TEST(!xec, p.what << " extend: " << xec.message());
   std::optional<acquire_result> second;
   locksmith::report db;
   asio::co_spawn(
      co_await asio::this_coro::executor,
      [&]() -> asio::awaitable<void> { second = co_await p.waiter(b, db); }, asio::detached);
   co_await lt::sleep_for(200ms);
   BOOST_TEST(!second.has_value(), p.what << ": taken while held");
   auto [uec] = co_await a.async_unlock(first, tuple);
   BOOST_TEST(!uec, p.what << " unlock: " << uec.message());
   // The waiter's own wait (10 s) ends it either way; its frame must not outlive this one.
   co_await eventually([&] { return second.has_value(); }, 20s);
   BOOST_TEST_REQUIRE(second.has_value(), p.what << ": the waiter never got it");
   auto& [sec, next] = *second;
   BOOST_TEST_REQUIRE(!sec, p.what << " waiter: " << sec.message() << " " << db.message());
   auto [uec2] = co_await b.async_unlock(next, tuple);
   BOOST_TEST(!uec2, p.what << " waiter's unlock: " << uec2.message());
}

// The plain lock of `name`.
primitive plain_lock(std::string what, std::string name)
{
   return {std::move(what),
           [name](locksmith::client& c, locksmith::report& d) -> asio::awaitable<acquire_result> {
              co_return co_await c.async_lock(name, with_report(opts, d), tuple);
           }};
}

// The primitives of the "Every primitive" recipe, on names under `prefix`.
std::vector<primitive> every_primitive(std::string const& prefix)
{
   using client = locksmith::client;
   using report = locksmith::report;
   auto const fair = prefix + "fair", sem = prefix + "sem", rw = prefix + "rw", re = prefix + "re";
   auto const writer = [rw](client& c, report& d) -> asio::awaitable<acquire_result> {
      co_return co_await c.async_write_lock(rw, with_report(opts, d), tuple);
   };
   auto const reader = [rw](client& c, report& d) -> asio::awaitable<acquire_result> {
      co_return co_await c.async_read_lock(rw, with_report(opts, d), tuple);
   };
   // Each client is an owner of its own: the second waits for the first.
   auto const reentrant = [re](client& c, report& d) -> asio::awaitable<acquire_result> {
      auto const owner = "owner-" + std::to_string(reinterpret_cast<std::uintptr_t>(&c));
      co_return co_await c.async_lock_reentrant(re, owner, with_report(opts, d), tuple);
   };
   return {
      {"fair lock",
       [fair](client& c, report& d) -> asio::awaitable<acquire_result> {
          auto o = opts;
          o.fair = true;
          co_return co_await c.async_lock(fair, with_report(o, d), tuple);
       }},
      {"semaphore",
       [sem](client& c, report& d) -> asio::awaitable<acquire_result> {
          co_return co_await c.async_acquire_permit(sem, 1, with_report(opts, d), tuple);
       }},
      {"writer, then writer", writer},
      {"writer, then reader", writer, reader},
      {"reader, then writer", reader, writer},
      {"reentrant lock", reentrant},
   };
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(acl_recipes, server_fixture, *needs_redis_server())

// The "Every primitive" recipe on top of the first: each primitive handed over between two
// clients. Without it, the first recipe alone is refused (auth_failed): the recipe is needed.
BOOST_AUTO_TEST_CASE(every_primitive_works_through_its_recipe)
{
   add_user(srv, "locker", lt::acl_rules(password, {lt::recipe_primitives}));
   add_user(srv, "lock-only", lt::acl_rules(password));
   auto const url = as_user(srv.url(), "locker");
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      locksmith::client a{ioc.get_executor(), test_config({url})};
      locksmith::client b{ioc.get_executor(), test_config({url})};
      for (auto const& p : every_primitive(unique_key() + "/"))
         co_await hand_over(a, b, p);
      co_await a.async_close();
      co_await b.async_close();

      locksmith::client bare{ioc.get_executor(), test_config({as_user(srv.url(), "lock-only")})};
      locksmith::report d;
      auto [ec, l] =
         co_await bare.async_acquire_permit(unique_key(), 1, with_report(opts, d), tuple);
      BOOST_TEST(ec == error::auth_failed, ec.message() << ": " << d.message());
      // The attempt's release is denied too, and a denial is final: nothing is left for a
      // graceful close to wait for (it timed out, sending the release again until the TTL).
      auto [cec] = co_await bare.async_close(tuple);
      BOOST_TEST(!cec, "close: " << cec.message());
   }());
   auto const log = lt::acl_denials(srv);
   // Only the lock-only user's refusals.
   BOOST_TEST(log.find("lock-only:") != std::string::npos, log);
   BOOST_TEST(log.find("locker:") == std::string::npos, log);
}

// "Inspecting": a held lock inspected through its recipe; the first recipe alone is refused.
BOOST_AUTO_TEST_CASE(inspecting_works_through_its_recipe)
{
   add_user(srv, "locker", lt::acl_rules(password, {lt::recipe_inspecting}));
   add_user(srv, "lock-only", lt::acl_rules(password));
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::client a{ioc.get_executor(), test_config({as_user(srv.url(), "locker")})};
      auto const name = unique_key();
      auto l = co_await a.async_lock(name, opts);
      auto [ec, seen] = co_await a.async_inspect(name, tuple);
      BOOST_TEST(!ec, ec.message());
      BOOST_TEST(seen.held());
      locksmith::client bare{ioc.get_executor(), test_config({as_user(srv.url(), "lock-only")})};
      auto [bec, unseen] = co_await bare.async_inspect(name, tuple);
      BOOST_TEST(bec == error::auth_failed, bec.message());
      co_await a.async_unlock(l);
      co_await a.async_close();
      co_await bare.async_close(tuple);
   }());
   auto const log = lt::acl_denials(srv);
   BOOST_TEST(log.find("lock-only:") != std::string::npos, log);
   BOOST_TEST(log.find("locker:") == std::string::npos, log);
}

// "A database other than 0": a lock on /3 lands there.
BOOST_AUTO_TEST_CASE(a_database_other_than_0_works_through_its_recipe)
{
   add_user(srv, "locker", lt::acl_rules(password, {lt::recipe_database}));
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::client a{ioc.get_executor(), test_config({as_user(srv.url(), "locker") + "/3"})};
      locksmith::client b{ioc.get_executor(), test_config({as_user(srv.url(), "locker") + "/3"})};
      co_await hand_over(a, b, plain_lock("lock on /3", name));
      auto l = co_await a.async_lock(name, opts);
      // A script may SELECT: the key is in database 3, not in 0.
      auto const in = [&](char const* db) {
         return srv
            .command({"EVAL", "redis.call('SELECT', ARGV[1]) return redis.call('EXISTS', KEYS[1])",
                      "1", lock_key(name), db})
            .integer;
      };
      BOOST_TEST(in("3") == 1);
      BOOST_TEST(in("0") == 0);
      co_await a.async_unlock(l);
      co_await a.async_close();
      co_await b.async_close();
   }());
   BOOST_TEST(lt::acl_denials(srv) == "", lt::acl_denials(srv));
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

struct sentinel_fixture : lt::context_fixture {
   lt::sentinel_group group;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(acl_recipes_sentinel, sentinel_fixture, *needs_redis_server())

// "Sentinel" through the Sentinels, and "`config::wait_replicas`" on the master directly, each
// through a user of its own with exactly its recipes.
BOOST_AUTO_TEST_CASE(sentinel_and_wait_replicas_work_through_their_recipes)
{
   add_user(group.master(), "via-sentinel", lt::acl_rules(password, {lt::recipe_sentinel}));
   add_user(group.master(), "waits", lt::acl_rules(password, {lt::recipe_wait_replicas}));
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      {
         auto const cfg = test_config({as_user(group.url(), "via-sentinel")}, 500ms);
         locksmith::client a{ioc.get_executor(), cfg}, b{ioc.get_executor(), cfg};
         co_await hand_over(a, b, plain_lock("lock through Sentinel", unique_key("s")));
         co_await a.async_close();
         co_await b.async_close();
      }
      {
         auto cfg = test_config({as_user(group.master().url(), "waits")}, 500ms);
         cfg.wait_replicas = 1;
         locksmith::client a{ioc.get_executor(), cfg}, b{ioc.get_executor(), cfg};
         co_await hand_over(a, b, plain_lock("lock with wait_replicas", unique_key("w")));
         co_await a.async_close();
         co_await b.async_close();
      }
   }());
   BOOST_TEST(lt::acl_denials(group.master()) == "", lt::acl_denials(group.master()));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(acl_recipes_cluster, lt::cluster_fixture,
                         *needs_redis_server() * lt::needs_cluster_server())

// "Redis Cluster": the same user on every master; a lock on every master handed over, and every
// primitive on one.
BOOST_AUTO_TEST_CASE(a_cluster_works_through_its_recipe)
{
   auto const rules = lt::acl_rules(password, {lt::recipe_primitives, lt::recipe_cluster});
   for (std::size_t i = 0; i < cluster.size(); ++i)
      add_user(cluster.master(i), "locker", rules);
   auto const url = as_user(cluster.url(), "locker");
   run(ioc, 120s, [&]() -> asio::awaitable<void> {
      auto const c = test_config({url}, 1s);
      locksmith::client a{ioc.get_executor(), c}, b{ioc.get_executor(), c};
      for (std::size_t i = 0; i < cluster.size(); ++i)
         co_await hand_over(a, b, plain_lock("lock on master " + std::to_string(i), name_on(i)));
      for (auto p : every_primitive(unique_key() + "/")) {
         p.what += " on a cluster";
         co_await hand_over(a, b, std::move(p));
      }
      co_await a.async_close();
      co_await b.async_close();
   }());
   for (std::size_t i = 0; i < cluster.size(); ++i)
      BOOST_TEST(lt::acl_denials(cluster.master(i)) == "",
                 "master " << i << ": " << lt::acl_denials(cluster.master(i)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_acl_recipes
