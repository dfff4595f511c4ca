// ACL users against a real redis-server: a user whose rights stop at the lock's keys, channels
// and commands can lock, renew, wait and unlock; a wrong password and a denied command fail at
// once with error::auth_failed; the password shows up nowhere.
#include "support/integration.hpp"
#include "support/server_version.hpp"

namespace {

constexpr char const* password = "s3cret-Pa55";

// Every command the lock sends or its scripts run, and nothing else.
std::vector<std::string> const lock_commands{
   "+evalsha", "+eval",           "+script|load", "+subscribe", "+unsubscribe", "+ping",
   "+hello",   "+client|setname", "+get",         "+set",       "+del",         "+pexpire",
   "+pttl",    "+publish",        "+time",        "+incr"};

// Creates the user `name` with the given password, limited to the lock's keys and channels and to
// `commands`.
void add_user(server_fixture& f, std::string const& name, std::vector<std::string> const& commands)
{
   std::vector<std::string> args{
      "ACL", "SETUSER", name, "reset", "on", std::string{">"} + password, "~locksmith:*"};
   for (auto const& rule : locksmith::test::acl_channels("locksmith:*"))
      args.push_back(rule);
   args.insert(args.end(), commands.begin(), commands.end());
   auto const r = f.srv.command(args);
   BOOST_REQUIRE_MESSAGE(r.type == locksmith::test::reply::kind::status, r.str);
}

locksmith::config user_config(server_fixture& f, std::string const& user, std::string const& pass)
{
   return {
      .nodes = {"redis://" + user + ":" + pass + "@127.0.0.1:" + std::to_string(f.srv.port())}};
}

// Denials the server logged (ACL LOG), for the failure message.
std::string acl_log(server_fixture& f)
{
   auto const r = f.srv.command({"ACL", "LOG"});
   std::string out;
   for (auto const& entry : r.elements)
      for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
         if (entry.elements[i].str == "reason" || entry.elements[i].str == "object")
            out += entry.elements[i + 1].str + " ";
   return out;
}

// One lock attempt with this config, with a long wait that a refusal must not wait out.
error_code lock_once(server_fixture& f, locksmith::config cfg, locksmith::report& diag)
{
   error_code ec;
   auto attempt = [&]() -> asio::awaitable<void> {
      locksmith::client c{f.ioc.get_executor(), std::move(cfg)};
      std::tie(ec, std::ignore) =
         co_await c.async_lock(unique_key(), {.ttl = 10s, .wait = 20s}, diag, tuple);
   };
   run(f.ioc, attempt(), 30s);
   return ec;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(acl, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(a_user_limited_to_the_lock_can_lock_renew_wait_and_unlock)
{
   add_user(*this, "locker", lock_commands);
   auto const name = unique_key();
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         locksmith::client holder{ioc.get_executor(), user_config(*this, "locker", password)};
         locksmith::client waiter{ioc.get_executor(), user_config(*this, "locker", password)};
         locksmith::report diag;
         auto [ec, l] = co_await holder.async_lock(name, {.ttl = 600ms}, diag, tuple);
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
      }(),
      30s);
   BOOST_TEST(acl_log(*this) == "", "denied: " << acl_log(*this));
}

BOOST_AUTO_TEST_CASE(a_wrong_password_fails_at_once_with_auth_failed)
{
   add_user(*this, "locker", lock_commands);
   // As on any server with ACL users: nothing runs unauthenticated. (Boost.Redis 1.92 sends the
   // commands queued behind a refused HELLO; a default user that is on would run them.) The
   // server helper is the default user: from here on, only clients that log in talk to it.
   BOOST_REQUIRE(srv.text({"ACL", "SETUSER", "default", "off"}) == "OK");
   auto const name = unique_key();
   error_code ec;
   locksmith::report diag;
   clock_type::duration took{};
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         locksmith::client c{ioc.get_executor(), user_config(*this, "locker", "not-the-password")};
         auto const t0 = clock_type::now();
         std::tie(ec, std::ignore) =
            co_await c.async_lock(name, {.ttl = 10s, .wait = 20s}, diag, tuple);
         took = clock_type::now() - t0;
         // Nothing was taken: the right password gets the lock at once.
         locksmith::client good{ioc.get_executor(), user_config(*this, "locker", password)};
         auto [gec, l] = co_await good.async_try_lock(name, {.ttl = 10s}, tuple);
         BOOST_TEST(!gec, gec.message());
         co_await good.async_unlock(l, tuple);
      }(),
      30s);
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
   std::vector<std::string> commands;
   for (auto const& c : lock_commands)
      if (c != "+evalsha")
         commands.push_back(c);
   add_user(*this, "no-evalsha", commands);
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
   std::vector<std::string> commands;
   for (auto const& c : lock_commands)
      if (c != "+set")
         commands.push_back(c);
   add_user(*this, "no-set", commands);
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
   add_user(*this, "locker", lock_commands);
   auto cfg = user_config(*this, "locker", password);
   cfg.prefix = "elsewhere:";
   locksmith::report diag;
   auto const ec = lock_once(*this, cfg, diag);
   BOOST_TEST(ec == error::auth_failed, ec.message());
   BOOST_TEST_MESSAGE("report: " << diag.message());
   BOOST_TEST(diag.message().find("NOPERM") != std::string::npos, diag.message());
}

BOOST_AUTO_TEST_SUITE_END()
