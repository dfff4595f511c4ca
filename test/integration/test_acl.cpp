// ACL users against a real redis-server: a user whose rights stop at the lock's keys, channels
// and commands can lock, renew, wait and unlock; a wrong password and a denied command fail at
// once with error::auth_failed; the password shows up nowhere.
#include "readme_acl.hpp"
#include "support/integration.hpp"
#include "support/recorded_link.hpp"
#include "support/server_version.hpp"

namespace test_acl {

namespace {

constexpr char const* password = "s3cret-Pa55";

// The first ACL recipe of docs/operations.md (readme_acl.hpp): the lock's keys, channels and
// commands, and nothing else.
std::vector<std::string> lock_rules()
{
   return locksmith::test::acl_rules(password);
}

// Creates the user `name` with the given rules (keys, channels, commands and password).
void add_user(server_fixture& f, std::string const& name, std::vector<std::string> const& rules)
{
   std::vector<std::string> args{"ACL", "SETUSER", name, "reset"};
   args.insert(args.end(), rules.begin(), rules.end());
   auto const r = f.srv.command(args);
   BOOST_REQUIRE_MESSAGE(r.type == locksmith::test::reply::kind::status, r.str);
}

// The rules without one of them.
std::vector<std::string> without(std::vector<std::string> rules, std::string const& rule)
{
   std::erase(rules, rule);
   return rules;
}

locksmith::config user_config(server_fixture& f, std::string const& user, std::string const& pass)
{
   return {
      .nodes = {"redis://" + user + ":" + pass + "@127.0.0.1:" + std::to_string(f.srv.port())}};
}

// One lock attempt with this config, with a long wait that a refusal must not wait out.
error_code lock_once(server_fixture& f, locksmith::config cfg, locksmith::report& diag)
{
   error_code ec;
   auto attempt = [&]() -> asio::awaitable<void> {
      locksmith::client c{f.ioc.get_executor(), std::move(cfg)};
      std::tie(ec, std::ignore) =
         co_await c.async_lock(unique_key(), {.ttl = 10s, .wait = 20s, .diag = &diag}, tuple);
   };
   run(f.ioc, 30s, attempt());
   return ec;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(acl, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(a_user_limited_to_the_lock_can_lock_renew_wait_and_unlock)
{
   add_user(*this, "locker", lock_rules());
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      locksmith::client holder{ioc.get_executor(), user_config(*this, "locker", password)};
      locksmith::client waiter{ioc.get_executor(), user_config(*this, "locker", password)};
      locksmith::report diag;
      auto [ec, l] = co_await holder.async_lock(name, {.ttl = 600ms, .diag = &diag}, tuple);
      BOOST_REQUIRE_MESSAGE(!ec, ec.message() << " " << diag.message());
      auto [xec] = co_await holder.async_extend(l, 900ms, tuple);
      BOOST_TEST(!xec, xec.message());
      // The waiter sleeps on the release channel; the watchdog renews meanwhile, past the TTL.
      auto waited = asio::co_spawn(
         ioc,
         waiter.async_lock(name, {.ttl = 10s, .wait = 10s}, asio::as_tuple(asio::use_awaitable)),
         asio::deferred);
      co_await sleep(2s);
      BOOST_TEST(!l.lost());
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "1");
      auto [uec] = co_await holder.async_unlock(l, tuple);
      BOOST_TEST(!uec, uec.message());
      auto [wec, wl] = co_await std::move(waited);
      BOOST_TEST(!wec, wec.message());
      auto [wuec] = co_await waiter.async_unlock(wl, tuple);
      BOOST_TEST(!wuec, wuec.message());
   }());
   BOOST_TEST(locksmith::test::acl_denials(srv) == "",
              "denied: " << locksmith::test::acl_denials(srv));
}

BOOST_AUTO_TEST_CASE(a_wrong_password_fails_at_once_with_auth_failed)
{
   add_user(*this, "locker", lock_rules());
   // As on any server with ACL users: nothing runs unauthenticated. (Boost.Redis 1.92 sends the
   // commands queued behind a refused HELLO; a default user that is on would run them.) The
   // server helper is the default user: from here on, only clients that log in talk to it.
   BOOST_REQUIRE(srv.text({"ACL", "SETUSER", "default", "off"}) == "OK");
   error_code ec;
   locksmith::report diag;
   clock_type::duration took{};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      locksmith::client c{ioc.get_executor(), user_config(*this, "locker", "not-the-password")};
      auto const t0 = clock_type::now();
      std::tie(ec, std::ignore) =
         co_await c.async_lock(name, {.ttl = 10s, .wait = 20s, .diag = &diag}, tuple);
      took = clock_type::now() - t0;
      // Nothing was taken: the right password gets the lock at once.
      locksmith::client good{ioc.get_executor(), user_config(*this, "locker", password)};
      auto [gec, l] = co_await good.async_try_lock(name, {.ttl = 10s}, tuple);
      BOOST_TEST(!gec, gec.message());
      co_await good.async_unlock(l, tuple);
   }());
   BOOST_TEST(ec == error::auth_failed, ec.message());
   BOOST_TEST(took < 5s);
   auto const m = diag.message();
   BOOST_TEST_MESSAGE("report: " << m);
   BOOST_TEST(m.find("WRONGPASS") != std::string::npos, m);
   BOOST_TEST(m.find("redis://locker:***@127.0.0.1") != std::string::npos, m);
   BOOST_TEST(m.find("not-the-password") == std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(a_user_denied_evalsha_fails_at_once_with_auth_failed)
{
   add_user(*this, "no-evalsha", without(lock_rules(), "+evalsha"));
   locksmith::report diag;
   auto const ec = lock_once(*this, user_config(*this, "no-evalsha", password), diag);
   BOOST_TEST(ec == error::auth_failed, ec.message());
   auto const m = diag.message();
   BOOST_TEST_MESSAGE("report: " << m);
   BOOST_TEST(m.find("NOPERM") != std::string::npos, m);
   BOOST_TEST(m.find("evalsha") != std::string::npos, m);
}

// SET denied: the acquire script's own SET is refused inside the script, which every server
// reports as an ERR (Redis 6 wraps it in "Error running script", Redis 7 appends where the script
// stopped, Redis 8 says "ACL failure in script"), never as NOPERM. It is a refusal of our rights
// all the same: auth_failed, at once.
BOOST_AUTO_TEST_CASE(a_command_denied_inside_a_script_fails_at_once_with_auth_failed)
{
   auto rules = lock_rules();
   std::erase(rules, std::string{"+set"});
   add_user(*this, "no-set", rules);
   locksmith::report diag;
   auto const ec = lock_once(*this, user_config(*this, "no-set", password), diag);
   BOOST_TEST(ec == error::auth_failed, ec.message());
   auto const m = diag.message();
   BOOST_TEST_MESSAGE("report: " << m);
   // Each version's words (see test/unit/test_script_errors.cpp).
   BOOST_TEST((m.find("can't run this command") != std::string::npos ||
               m.find("ACL failure in script") != std::string::npos),
              m);
}

BOOST_AUTO_TEST_CASE(keys_outside_the_users_pattern_fail_with_auth_failed)
{
   add_user(*this, "locker", lock_rules());
   auto cfg = user_config(*this, "locker", password);
   cfg.prefix = "elsewhere:";
   locksmith::report diag;
   auto const ec = lock_once(*this, cfg, diag);
   BOOST_TEST(ec == error::auth_failed, ec.message());
   BOOST_TEST_MESSAGE("report: " << diag.message());
   BOOST_TEST(diag.message().find("NOPERM") != std::string::npos, diag.message());
}

// A single node has no restart quarantine by default, so it needs no INFO: a user without +info
// (the README's line before issue 24) still locks it.
BOOST_AUTO_TEST_CASE(a_single_node_needs_no_info)
{
   add_user(*this, "no-info", without(lock_rules(), "+info"));
   locksmith::report diag;
   auto const ec = lock_once(*this, user_config(*this, "no-info", password), diag);
   BOOST_TEST(!ec, ec.message() << " " << diag.message());
   BOOST_TEST(locksmith::test::acl_denials(srv) == "",
              "denied: " << locksmith::test::acl_denials(srv));
}

// Issue 24, the safety case. 5 nodes, each with the documented user (the lock's recipe and that of
// every primitive: a plain exec is a read-write lock's writer) and with the same user without
// +info, as the README's line was; a holder takes a lock (TTL 10 s); 3 of the 5 nodes are killed
// and restarted empty, with the same users. Through the user without +info a second client was
// handed the held lock: a node whose INFO was denied was trusted. Now such a node does not count,
// and the attempt fails at once with auth_failed, naming the node and the command in the report and
// the log. Through the README's line, the quarantine holds.
BOOST_FIXTURE_TEST_CASE(restarts_never_hand_out_a_held_lock_through_the_readmes_acl_user,
                        servers_fixture)
{
   auto const rules = locksmith::test::acl_rules(password, {locksmith::test::recipe_primitives});
   auto args = locksmith::test::user_args("locker", rules);
   auto const no_info = locksmith::test::user_args("no-info", without(rules, "+info"));
   args.insert(args.end(), no_info.begin(), no_info.end());
   for (int i = 0; i < 5; ++i)
      servers.push_back(std::make_unique<redis_server>(args));
   std::vector<std::string> errors;
   auto const as = [&](std::string const& user) {
      auto c = cfg(200ms);
      for (auto& n : c.nodes)
         n.insert(std::string_view{"redis://"}.size(), user + ":" + password + "@");
      c.restart_quarantine = locksmith::config{}.restart_quarantine;  // 30 s for 5 nodes
      c.logger = [&](locksmith::log_level l, std::string_view line) {
         if (l == locksmith::log_level::error)
            errors.emplace_back(line);
      };
      return c;
   };
   // A plain exec's lock: the writer of a read-write lock.
   auto const held = locksmith::lock_options{.ttl = 10s, .wait = 10s, .renew = false};
   auto const second = locksmith::lock_options{.ttl = 10s, .wait = 1s, .renew = false};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::client holder{ioc.get_executor(), as("locker")};
      locksmith::report diag;
      auto [hec, hl] = co_await holder.async_write_lock(name, with_report(held, diag), tuple);
      BOOST_REQUIRE_MESSAGE(!hec, hec.message() << ": " << diag.message());
      for (int i = 0; i < 3; ++i)
         servers[i]->restart();

      {  // Without +info: refused at once, and told why.
         locksmith::client careless{ioc.get_executor(), as("no-info")};
         locksmith::report d;
         auto const t0 = clock_type::now();
         auto [ec, l] = co_await careless.async_write_lock(name, with_report(second, d), tuple);
         BOOST_TEST(ec == error::auth_failed, ec.message() << ": " << d.message());
         BOOST_TEST((clock_type::now() - t0 < second.wait), "not at once");
         std::size_t denied = 0;
         for (auto const& n : d.nodes)
            if (n.message.find("INFO server failed (NOPERM") != std::string::npos) {
               ++denied;
               BOOST_TEST(n.node.starts_with("redis://no-info:***@127.0.0.1:"), n.node);
               BOOST_TEST(n.message.find("'info'") != std::string::npos, n.message);
               BOOST_TEST((n.ec == error::auth_failed));
            }
         BOOST_TEST(denied >= 3u, d.message());  // the vote of each node that said yes
         BOOST_TEST_MESSAGE("without +info: " << ec.message() << ": " << d.message());
         if (!ec)
            co_await careless.async_unlock(l, tuple);
         co_await careless.async_close(tuple);
      }
      BOOST_TEST(!errors.empty());
      for (auto const& e : errors)
         BOOST_TEST((e.find("INFO server failed (NOPERM") != std::string::npos &&
                     e.find("redis://no-info:***@127.0.0.1:") == 0),
                    e);

      {  // The README's line: the restarted nodes sit out their quarantine.
         locksmith::client second_client{ioc.get_executor(), as("locker")};
         locksmith::report d;
         auto [ec, l] =
            co_await second_client.async_write_lock(name, with_report(second, d), tuple);
         BOOST_TEST(ec, "the held lock was handed out");
         BOOST_TEST(d.message().find("in restart quarantine") != std::string::npos, d.message());
         BOOST_TEST_MESSAGE("README's line: " << ec.message() << ": " << d.message());
         if (!ec)
            co_await second_client.async_unlock(l, tuple);
         co_await second_client.async_close(tuple);
      }
      // Its key lives on 2 of the 5 nodes: the unlock finds it gone from a majority.
      auto [uec] = co_await holder.async_unlock(hl, tuple);
      BOOST_TEST((!uec || uec == error::lease_expired), uec.message());
      co_await holder.async_close(tuple);
   }());
}

// A refusal read with other pushes costs none of them: the subscriber link of a user limited to
// the lock's channels subscribes to a channel it may not use, then to one it may, back to back,
// so that the refusal and the confirmation come in one read; both are reported, in order. (A
// generic_response kept only a batch's error, and dropped the confirmation read with it: a
// channel left unconfirmed for the connection's life.)
BOOST_AUTO_TEST_CASE(a_refusal_among_pushes_costs_none_of_them)
{
   auto const version = locksmith::test::redis_server_version();
   if (!version || *version < locksmith::test::server_version{6, 2, 0}) {
      BOOST_TEST_MESSAGE("skipped: " << locksmith::test::redis_server_name()
                                     << " has no ACL rules for channels");
      return;
   }
   add_user(*this, "locker", lock_rules());
   using kind = locksmith::test::recorded_link::kind;
   locksmith::test::recorded_link link{ioc.get_executor(),
                                       "redis://locker:" + std::string{password} +
                                          "@127.0.0.1:" + std::to_string(srv.port()),
                                       locksmith::config{}};
   auto const allowed = release_channel(unique_key());
   link.subscribe("elsewhere");
   link.subscribe(allowed);
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      BOOST_TEST(co_await eventually(
         [&] { return link.first(kind::subscribed, allowed) != link.got.end(); }, 10s));
   }());
   auto const refused = link.first(kind::refused, "");
   BOOST_TEST_REQUIRE((refused != link.got.end()));
   BOOST_TEST(refused->payload.starts_with("NOPERM"), refused->payload);
   BOOST_TEST((refused < link.first(kind::subscribed, allowed)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_acl
