// Unit tests of unwrap_script_error and server_error_code (include/locksmith/detail/
// script_errors.hpp), on the exact texts that each server of the matrix (scripts/servers.sh)
// replied to a script whose command failed: a write on a replica, an ACL denial, maxmemory, a key
// of another type, a Lua runtime error, and the errors that no script wraps (BUSY, NOSCRIPT).
#include "sansio/script_errors.hpp"

#include <boost/test/unit_test.hpp>

#include <string_view>

namespace test_script_errors {

using locksmith::detail::server_error_code;
using locksmith::detail::unwrap_script_error;

namespace {

struct sample {
   std::string_view text;  // the server's error reply, as the client reads it
   std::string_view code;  // what server_error_code must say
};

// Redis 6.0.16 (Debian 11): a command's error inside a script is wrapped in a script error.
constexpr sample redis_6_0[] = {
   {"ERR Error running script (call to f_bd6f3018b28bbdb36260f19d3c44afed740db987): "
    "@user_script:1: @user_script: 1: -READONLY You can't write against a read only replica. ",
    "READONLY"},
   {"ERR Error running script (call to f_bd6f3018b28bbdb36260f19d3c44afed740db987): "
    "@user_script:1: @user_script: 1: -OOM command not allowed when used memory > 'maxmemory'. ",
    "OOM"},
   {"ERR Error running script (call to f_d62be7c8f35dd56a5f2788aeb88e376482084583): "
    "@user_script:1: WRONGTYPE Operation against a key holding the wrong kind of value ",
    "WRONGTYPE"},
   {"ERR Error running script (call to f_bd6f3018b28bbdb36260f19d3c44afed740db987): "
    "@user_script:1: @user_script: 1: The user executing the script can't run this command or "
    "subcommand ",
    "NOPERM"},
   {"ERR Error running script (call to f_54107ccc55395c15ab3b005bb2a3cf773b97c4a6): "
    "@user_script:1: @user_script: 1: The user executing the script can't access at least one of "
    "the keys mentioned in the command arguments ",
    "NOPERM"},
   {"ERR Error running script (call to f_d13bc48d895ba57f297c4db70c1d256548a54e2d): "
    "@user_script:1: user_script:1: attempt to perform arithmetic on a nil value ",
    "ERR"},
   {"ERR Error running script (call to f_b8aab0012a35dad5172b2b2fed883c6248bfb132): "
    "@user_script:1: @user_script: 1: Unknown Redis command called from Lua script ",
    "ERR"},
   {"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    "BUSY"},
   {"NOSCRIPT No matching script. Please use EVAL.", "NOSCRIPT"},
};

// Since Redis 7.0 a command's error inside a script is the command's own, with where the script
// stopped appended; these words are the same in every later server of the matrix that sent them.
constexpr sample readonly_since_7{"READONLY You can't write against a read only replica. script: "
                                  "bd6f3018b28bbdb36260f19d3c44afed740db987, on @user_script:1.",
                                  "READONLY"};
constexpr sample oom_since_7{"OOM command not allowed when used memory > 'maxmemory'. script: "
                             "bd6f3018b28bbdb36260f19d3c44afed740db987, on @user_script:1.",
                             "OOM"};
constexpr sample wrongtype_since_7{
   "WRONGTYPE Operation against a key holding the wrong kind of value script: "
   "d62be7c8f35dd56a5f2788aeb88e376482084583, on @user_script:1.",
   "WRONGTYPE"};
constexpr sample lua_error_since_7{
   "ERR user_script:1: attempt to perform arithmetic on a nil value script: "
   "d13bc48d895ba57f297c4db70c1d256548a54e2d, on @user_script:1.",
   "ERR"};
// Since Redis 8.0, an ACL denial in a script in words of its own.
constexpr sample acl_command_since_8{
   "ERR ACL failure in script: User u has no permissions to run the 'set' command script: "
   "bd6f3018b28bbdb36260f19d3c44afed740db987, on @user_script:1.",
   "NOPERM"};

// Redis 7.0.15 (Debian 12): an ACL denial is still ERR.
constexpr sample redis_7_0[] = {
   readonly_since_7,
   oom_since_7,
   wrongtype_since_7,
   {"ERR The user executing the script can't run this command or subcommand script: "
    "bd6f3018b28bbdb36260f19d3c44afed740db987, on @user_script:1.",
    "NOPERM"},
   {"ERR The user executing the script can't access at least one of the keys mentioned in the "
    "command arguments script: 54107ccc55395c15ab3b005bb2a3cf773b97c4a6, on @user_script:1.",
    "NOPERM"},
   lua_error_since_7,
   {"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    "BUSY"},
   {"NOSCRIPT No matching script. Please use EVAL.", "NOSCRIPT"},
};

// Redis 8.0.2 (Debian 13): as 7.0, but an ACL denial in words of its own.
constexpr sample redis_8_0[] = {
   readonly_since_7,
   oom_since_7,
   acl_command_since_8,
   {"ERR ACL failure in script: No permissions to access a key script: "
    "54107ccc55395c15ab3b005bb2a3cf773b97c4a6, on @user_script:1.",
    "NOPERM"},
   lua_error_since_7,
};

// Valkey 8.1.1 (Debian 13): as Redis 8.0, in its own name.
constexpr sample valkey_8_1[] = {
   readonly_since_7,
   acl_command_since_8,
   wrongtype_since_7,
   {"BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    "BUSY"},
   {"NOSCRIPT No matching script.", "NOSCRIPT"},
};

void check(sample const& s)
{
   BOOST_TEST(server_error_code(s.text) == s.code, s.text);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(script_errors)

BOOST_AUTO_TEST_CASE(redis_6_0_wraps_a_commands_error_in_a_script_error)
{
   for (auto const& s : redis_6_0)
      check(s);
   BOOST_TEST(unwrap_script_error(redis_6_0[0].text) ==
              "READONLY You can't write against a read only replica.");
   BOOST_TEST(unwrap_script_error(redis_6_0[2].text) ==
              "WRONGTYPE Operation against a key holding the wrong kind of value");
}

BOOST_AUTO_TEST_CASE(redis_7_0_replies_with_the_commands_own_error)
{
   for (auto const& s : redis_7_0) {
      check(s);
      BOOST_TEST(unwrap_script_error(s.text) == s.text);
   }
}

BOOST_AUTO_TEST_CASE(redis_8_0_names_an_acl_denial_in_a_script_its_own_way)
{
   for (auto const& s : redis_8_0) {
      check(s);
      BOOST_TEST(unwrap_script_error(s.text) == s.text);
   }
}

BOOST_AUTO_TEST_CASE(valkey_8_1_says_what_redis_8_0_says)
{
   for (auto const& s : valkey_8_1) {
      check(s);
      BOOST_TEST(unwrap_script_error(s.text) == s.text);
   }
}

BOOST_AUTO_TEST_CASE(a_script_error_without_a_command_error_is_kept_whole)
{
   // A Lua error (no code of its own) stays the server's whole text, without trailing blanks.
   auto const lua = redis_6_0[5].text;
   BOOST_TEST(unwrap_script_error(lua) == lua.substr(0, lua.size() - 1));
   // Location-like text that does not end in a code, and truncated wrappers, are left alone.
   BOOST_TEST(server_error_code("ERR Error running script (call to f_x): @user_script:") == "ERR");
   BOOST_TEST(server_error_code("ERR Error running script (call to f_x): -") == "ERR");
   BOOST_TEST(server_error_code("ERR Error running script (call to f_x") == "ERR");
   BOOST_TEST(server_error_code("ERR Error running script (call to f_x): -X") == "ERR");
   BOOST_TEST(server_error_code("") == "");
   BOOST_TEST(server_error_code("MOVED 3999 127.0.0.1:6381") == "MOVED");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_script_errors
