// Unit tests of next_eval_step and refused_step (src/sansio/eval_reply.hpp): what the command link
// makes of each completion of a script call's request (a reply, NOSCRIPT, a timeout, a server
// error, an ACL refusal, READONLY from a demoted master, LOADING, a WAIT that fell short), and of a
// call that it refuses unsent.
#include "sansio/eval_reply.hpp"
#include "protocol/calls.hpp"
#include "sansio/set_scripts.hpp"

#include "support/print.hpp"
#include "support/resp_reply.hpp"

#include <boost/asio/error.hpp>
#include <boost/redis/error.hpp>
#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace test_eval_reply {

namespace {

using namespace std::chrono_literals;
using boost::redis::generic_response;
using boost::redis::resp3::node;
using boost::redis::resp3::type;
using locksmith::error;
using locksmith::error_code;
using namespace locksmith::detail;
namespace asio_error = boost::asio::error;
using action = eval_step::action;

constexpr char const* refused_line =
   "Failed to connect to Redis server at 127.0.0.1:6379 (TLS disabled): Connection refused";
constexpr char const* wrongpass_line =
   "Setup request execution failed: WRONGPASS invalid username-password pair or user is disabled.";
// Redis 6.0 wraps a command's error inside a script (test_script_errors.cpp has the matrix's).
constexpr char const* wrapped_readonly =
   "ERR Error running script (call to f_bd6f3018b28bbdb36260f19d3c44afed740db987): "
   "@user_script:1: @user_script: 1: -READONLY You can't write against a read only replica. ";
constexpr char const* wrapped_denial =
   "ERR Error running script (call to f_bd6f3018b28bbdb36260f19d3c44afed740db987): "
   "@user_script:1: @user_script: 1: The user executing the script can't run this command or "
   "subcommand ";

using locksmith::test::number;

// The acquire script's `{flag, value}`, then what else the request read (a WAIT's count).
generic_response acquired(std::string flag, std::string value, std::vector<node> more = {})
{
   generic_response r;
   r.value() = {{type::array, 2, 0, ""}, number(std::move(flag), 1), number(std::move(value), 1)};
   r.value().insert(r.value().end(), more.begin(), more.end());
   return r;
}

generic_response server_error(std::string text)
{
   generic_response r;
   r = boost::redis::adapter::error{type::simple_error, std::move(text)};
   return r;
}

// A link whose last connection attempt was refused; and one whose server refuses our password.
link_health refusing()
{
   link_health h;
   h.on_log(true, refused_line);
   return h;
}

link_health wrong_password()
{
   link_health h;
   h.on_log(true, wrongpass_line);
   return h;
}

// next_eval_step over the acquire script, counting how often still_wanted is asked.
struct stepper {
   link_health health;
   bool wanted = true;
   int asked = 0;

   eval_step operator()(eval_completion const& c, generic_response& r)
   {
      std::function<bool()> const still_wanted = [this] {
         ++asked;
         return wanted;
      };
      return next_eval_step(c, acquire_script(), health, still_wanted, r);
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(eval_reply)

BOOST_AUTO_TEST_CASE(a_reply_completes_the_call_and_opens_the_gate)
{
   stepper step;
   auto r = acquired("1", "42");
   auto const s = step({}, r);
   BOOST_TEST((s.next == action::complete));
   BOOST_TEST(!s.ec);
   BOOST_TEST(s.server_message.empty());
   BOOST_TEST(s.answered);
   BOOST_TEST(!s.timed_out);
   BOOST_TEST(!s.demoted);
   BOOST_TEST(r.value().size() == 3u);  // the script's reply, untouched
   BOOST_TEST(step.asked == 0);         // still_wanted is asked on NOSCRIPT only
}

BOOST_AUTO_TEST_CASE(noscript_sends_the_text_once_and_only_while_wanted)
{
   stepper step;
   auto r = server_error("NOSCRIPT No matching script. Please use EVAL.");
   auto const first = step({}, r);
   BOOST_TEST((first.next == action::send_text));
   BOOST_TEST(!first.answered);  // the gate hears of the node when the text is answered
   BOOST_TEST(step.asked == 1);

   // NOSCRIPT to the text itself (nothing else would load it): the caller gets the error.
   auto const again = step({.by_text = true}, r);
   BOOST_TEST((again.next == action::complete));
   BOOST_TEST(!again.ec);
   BOOST_TEST(again.server_message.starts_with("NOSCRIPT"));
   BOOST_TEST(step.asked == 1);

   // The caller gave up meanwhile: an acquire sent now could take a key that nobody releases.
   step.wanted = false;
   auto const unwanted = step({}, r);
   BOOST_TEST((unwanted.next == action::complete));
   BOOST_TEST(unwanted.server_message.starts_with("NOSCRIPT"));
   BOOST_TEST(unwanted.answered);
   BOOST_TEST(step.asked == 2);
}

BOOST_AUTO_TEST_CASE(a_call_cancelled_by_its_deadline_timed_out)
{
   stepper step{.health = refusing()};
   generic_response r;
   auto const s = step({.ec = asio_error::operation_aborted}, r);
   BOOST_TEST((s.next == action::complete));
   BOOST_TEST(s.ec == error_code{asio_error::timed_out});
   BOOST_TEST(s.timed_out);
   BOOST_TEST(!s.answered);
   BOOST_TEST(s.server_message == refused_line);  // why, if the connection knows

   // Cancelled by a stop: not a silent node.
   auto const stopped = step({.ec = asio_error::operation_aborted, .stopped = true}, r);
   BOOST_TEST(stopped.ec == error_code{asio_error::operation_aborted});
   BOOST_TEST(!stopped.timed_out);

   // Another transport error is passed on, with the connection's last problem.
   auto const reset = step({.ec = asio_error::connection_reset}, r);
   BOOST_TEST(reset.ec == error_code{asio_error::connection_reset});
   BOOST_TEST(!reset.timed_out);
   BOOST_TEST(!reset.answered);
   BOOST_TEST(reset.server_message == refused_line);
}

BOOST_AUTO_TEST_CASE(a_failure_that_waiting_will_not_mend_names_itself)
{
   stepper step{.health = wrong_password()};
   generic_response r;
   auto const s = step({.ec = asio_error::operation_aborted}, r);
   BOOST_TEST(s.ec == error::auth_failed);
   BOOST_TEST(s.server_message.starts_with("WRONGPASS"));
   BOOST_TEST(s.timed_out);  // the gate still hears that the call went unanswered
   BOOST_TEST(step({.ec = asio_error::connection_refused}, r).ec == error::auth_failed);
   // Stopped: the stop is the reason.
   auto const stopped = step({.ec = asio_error::operation_aborted, .stopped = true}, r);
   BOOST_TEST(stopped.ec == error_code{asio_error::operation_aborted});
   // An answer is an answer, whatever the connection's setup said before.
   auto ok = acquired("1", "42");
   BOOST_TEST(!step({}, ok).ec);
}

BOOST_AUTO_TEST_CASE(redirections_and_other_server_errors_are_the_callers)
{
   for (std::string const text : {"MOVED 4576 127.0.0.1:7001", "ASK 4576 127.0.0.1:7002",
                                  "TRYAGAIN Multiple keys request during rehashing of slot",
                                  "CLUSTERDOWN The cluster is down", "BUSY Redis is busy",
                                  "WRONGTYPE Operation against a key holding the wrong kind",
                                  "READONLY You can't write against a read only replica."}) {
      stepper step;
      auto r = server_error(text);
      auto const s = step({}, r);
      BOOST_TEST((s.next == action::complete));
      BOOST_TEST(!s.ec, text);
      BOOST_TEST(s.server_message == text);
      BOOST_TEST(s.answered);
      BOOST_TEST(!s.demoted);
   }
}

// A server that loads its data set (a restart from its dump) ran nothing: the call fails as a
// routine operation's, which the caller waits out, and no key is owed a release there.
BOOST_AUTO_TEST_CASE(a_server_loading_its_data_is_a_passing_failure_that_ran_nowhere)
{
   std::string const text = "LOADING Redis is loading the dataset in memory";
   for (bool const sentinel : {false, true}) {
      stepper step;
      auto r = server_error(text);
      auto const s = step({.sentinel = sentinel}, r);
      BOOST_TEST((s.next == action::complete));
      BOOST_TEST(s.ec == error_code{asio_error::try_again});
      BOOST_TEST(s.ran_nowhere);
      BOOST_TEST(s.server_message == text);
      BOOST_TEST(s.answered);
      BOOST_TEST(!s.demoted);
   }
   // Behind a WAIT it may be the WAIT's, after a script that ran: passing, but it may have run.
   {
      stepper step;
      auto r = server_error(text);
      auto const s = step({.wait_replicas = 1, .replica_timeout = 100ms}, r);
      BOOST_TEST(s.ec == error_code{asio_error::try_again});
      BOOST_TEST(!s.ran_nowhere);
   }
   // Any other answer ran.
   stepper step;
   auto r = server_error("BUSY Redis is busy running a script.");
   BOOST_TEST(!step({}, r).ran_nowhere);
}

// Such a server answers the connection's health check with LOADING too, and Boost.Redis ends the
// connection for it: it aborts the calls it had written (operation_aborted before their deadline;
// another transport error is read alike). Such a call met the load, and reads so, but it was
// written and may have run before the server restarted.
BOOST_AUTO_TEST_CASE(a_call_on_a_connection_ended_by_a_loading_ping_met_the_load)
{
   std::string const text = "LOADING Redis is loading the dataset in memory";
   stepper step;
   step.health.on_log(false, "Trying to connect to Redis server at 127.0.0.1:6379 (TLS disabled)");
   step.health.on_log(false, "Connected to Redis server at 127.0.0.1:6379 (TLS disabled)");
   step.health.on_log(true, "Health checker: server answered ping with an error: " + text);
   step.health.on_log(true, "Error processing message: Got RESP3 simple-error.");
   generic_response r;
   for (auto const ec :
        {error_code{asio_error::operation_aborted}, error_code{asio_error::eof},
         error_code{asio_error::connection_reset}, error_code{boost::redis::error::pong_timeout}}) {
      auto const s = step({.ec = ec, .before_deadline = true}, r);
      BOOST_TEST(s.ec == error_code{asio_error::try_again}, ec.message());
      BOOST_TEST(s.server_message == text);
      BOOST_TEST(!s.ran_nowhere);
      BOOST_TEST(!s.answered);
      BOOST_TEST(!s.timed_out);
   }
   // The call's own deadline is still a timeout (the silence gate's), and a stop a stop.
   auto const late = step({.ec = asio_error::operation_aborted}, r);
   BOOST_TEST(late.ec == error_code{asio_error::timed_out});
   BOOST_TEST(late.timed_out);
   auto const stopped = step({.ec = asio_error::operation_aborted, .stopped = true}, r);
   BOOST_TEST(stopped.ec == error_code{asio_error::operation_aborted});
   // Once the next attempt starts, a call cut short is that attempt's (a timeout, as any other
   // connection's end), with the last problem, which is still the refused health check until
   // the attempt meets one of its own.
   step.health.on_log(false, "Trying to connect to Redis server at 127.0.0.1:6379 (TLS disabled)");
   auto const next = step({.ec = asio_error::operation_aborted, .before_deadline = true}, r);
   BOOST_TEST(next.ec == error_code{asio_error::timed_out});
   BOOST_TEST(next.server_message.ends_with(text));
   // A health check refused for another reason is no load: a call cut short reads as before.
   stepper other;
   other.health.on_log(true, "Health checker: server answered ping with an error: ERR no");
   BOOST_TEST(other({.ec = asio_error::eof}, r).ec == error_code{asio_error::eof});
   BOOST_TEST(other({.ec = asio_error::operation_aborted, .before_deadline = true}, r).ec ==
              error_code{asio_error::timed_out});
}

BOOST_AUTO_TEST_CASE(acl_refusals_are_auth_failures)
{
   for (std::string const& text :
        std::vector<std::string>{"NOPERM User u has no permissions to run the 'evalsha' command",
                                 wrapped_denial, "NOAUTH Authentication required."}) {
      stepper step;
      auto r = server_error(text);
      auto const s = step({}, r);
      BOOST_TEST(s.ec == error::auth_failed, text);
      BOOST_TEST(s.server_message == text);
      BOOST_TEST(s.answered);
   }
}

BOOST_AUTO_TEST_CASE(readonly_demotes_a_master_that_sentinels_named)
{
   for (std::string const& text : std::vector<std::string>{
           "READONLY You can't write against a read only replica.", wrapped_readonly,
           "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
           "replica?)"}) {
      stepper step;
      auto r = server_error(text);
      auto const s = step({.sentinel = true}, r);
      BOOST_TEST(s.ec == error_code{boost::redis::error::role_check_failed}, text);
      BOOST_TEST(s.demoted);
      BOOST_TEST(s.server_message == text);
      BOOST_TEST(s.answered);
   }
   // Another error from a Sentinels' master is passed on as it is.
   stepper step;
   auto r = server_error("OOM command not allowed when used memory > 'maxmemory'.");
   auto const s = step({.sentinel = true}, r);
   BOOST_TEST(!s.ec);
   BOOST_TEST(!s.demoted);
}

BOOST_AUTO_TEST_CASE(a_wait_that_fell_short_of_a_grant_is_not_enough_replicas)
{
   eval_completion const waits{.wait_replicas = 2, .replica_timeout = 25ms};
   stepper step;
   auto short_of_one = acquired("1", "42", {number("1")});
   auto const s = step(waits, short_of_one);
   BOOST_TEST(s.ec == error::not_enough_replicas);
   BOOST_TEST(s.server_message == "WAIT: 1 of 2 replicas acknowledged within 25 ms");
   BOOST_TEST(s.answered);
   BOOST_TEST(short_of_one.value().size() == 3u);  // the WAIT's count came off

   auto enough = acquired("1", "42", {number("2")});
   auto const ok = step(waits, enough);
   BOOST_TEST(!ok.ec);
   BOOST_TEST(ok.server_message.empty());
   BOOST_TEST(enough.value().size() == 3u);

   // A refusal wrote nothing that replicas must have.
   auto taken = acquired("0", "900", {number("0")});
   BOOST_TEST(!step(waits, taken).ec);
   BOOST_TEST(taken.value().size() == 3u);

   // No WAIT was sent: the reply is the script's alone, and is left whole.
   auto alone = acquired("1", "42", {number("0")});
   BOOST_TEST(!step({}, alone).ec);
   BOOST_TEST(alone.value().size() == 4u);

   // The script's error wins over the WAIT (first_error_wins folded the request's replies).
   auto moved = server_error("MOVED 4576 127.0.0.1:7001");
   auto const redirected = step(waits, moved);
   BOOST_TEST(!redirected.ec);
   BOOST_TEST(redirected.server_message == "MOVED 4576 127.0.0.1:7001");
}

BOOST_AUTO_TEST_CASE(a_refused_call_says_why_it_was_not_sent)
{
   auto const stopped = refused_step(true, wrong_password());
   BOOST_TEST((stopped.next == action::complete));
   BOOST_TEST(stopped.ec == error_code{asio_error::operation_aborted});
   BOOST_TEST(stopped.server_message == "not sent: the client was stopped");

   auto const lasting = refused_step(false, wrong_password());
   BOOST_TEST(lasting.ec == error::auth_failed);
   BOOST_TEST(lasting.server_message.starts_with("WRONGPASS"));

   auto const silent = refused_step(false, refusing());
   BOOST_TEST(silent.ec == error_code{asio_error::timed_out});
   BOOST_TEST(silent.server_message ==
              std::string{"not sent: a call timed out and the node has not answered since ("} +
                 refused_line + ")");
   BOOST_TEST(refused_step(false, link_health{}).server_message ==
              "not sent: a call timed out and the node has not answered since");
   BOOST_TEST(!silent.timed_out);  // the gate is closed already
   BOOST_TEST(!silent.answered);
}

// A release's request leads with a PING (script::publishes), so that the server writes the
// waiter's message before the releaser's reply; what reads the reply never sees the PONG.
BOOST_AUTO_TEST_CASE(a_publishing_scripts_request_leads_with_a_ping_whose_pong_is_taken_off)
{
   // Only when another process may wait (the releasing process's contenders waited).
   auto const alone = release_call("p:", "name", "tok");
   BOOST_TEST(alone->code->publishes);
   BOOST_TEST(!alone->leads);
   BOOST_TEST(alone->by_sha.get_commands() == 1u);
   auto const release = release_call("p:", "name", "tok", true, true);
   BOOST_TEST(release->leads);
   BOOST_TEST(release->by_sha.get_commands() == 2u);
   BOOST_TEST(release->by_sha.payload().starts_with("*1\r\n$4\r\nPING\r\n*"));
   // The EVAL fallback goes without (a NOSCRIPT is rare, and an ASKING builds its own).
   BOOST_TEST(release->by_text().get_commands() == 1u);
   // Nothing that publishes nothing has one.
   for (auto const* s : every_script())
      if (s->role != script_role::release)
         BOOST_TEST(!s->publishes, s->name);
   // A script that publishes nothing never leads.
   auto const acquire = script_call::builder{acquire_script()}.done(true);
   BOOST_TEST(!acquire->leads);
   BOOST_TEST(acquire->by_sha.get_commands() == 1u);

   stepper step;
   node const pong{type::simple_string, 1, 0, "PONG"};
   generic_response r;
   r.value() = {pong, number("1")};
   auto const s = next_eval_step(
      {}, release_script(), step.health, [] { return true; }, r);
   BOOST_TEST(!s.ec);
   BOOST_TEST(r.value().size() == 1u);
   BOOST_TEST(r.value().front().value == "1");
   // Without the PONG (the EVAL fallback's reply): untouched.
   generic_response bare;
   bare.value() = {number("1")};
   next_eval_step(
      {.by_text = true}, release_script(), step.health, [] { return true; }, bare);
   BOOST_TEST(bare.value().size() == 1u);
   // An error stays the error: NOSCRIPT still sends the text.
   auto noscript = server_error("NOSCRIPT No matching script. Please use EVAL.");
   auto const again = next_eval_step(
      {}, release_script(), step.health, [] { return true; }, noscript);
   BOOST_TEST((again.next == action::send_text));
   // A script that publishes nothing keeps a reply that starts with a PONG as it is.
   generic_response other;
   other.value() = {pong, number("1")};
   next_eval_step(
      {}, acquire_script(), step.health, [] { return true; }, other);
   BOOST_TEST(other.value().size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_eval_reply
