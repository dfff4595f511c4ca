// Unit tests of the gate that stops feeding a node that does not answer
// (src/sansio/silence_gate.hpp).
#include "sansio/silence_gate.hpp"

#include <boost/test/unit_test.hpp>

namespace test_silence_gate {

using locksmith::detail::silence_gate;

BOOST_AUTO_TEST_SUITE(silence_gate_tests)

BOOST_AUTO_TEST_CASE(open_until_a_call_times_out)
{
   silence_gate g;
   BOOST_TEST(g.open());
   BOOST_TEST(!g.probing());
}

BOOST_AUTO_TEST_CASE(the_first_timeout_closes_it_and_sends_one_probe_only)
{
   silence_gate g;
   BOOST_TEST(g.on_timeout());
   BOOST_TEST(!g.open());
   BOOST_TEST(g.probing());
   // Calls that were already queued time out too: no second probe.
   BOOST_TEST(!g.on_timeout());
   BOOST_TEST(!g.on_timeout());
}

BOOST_AUTO_TEST_CASE(the_probes_answer_opens_it)
{
   silence_gate g;
   (void)g.on_timeout();
   BOOST_TEST(!g.on_probe(true));
   BOOST_TEST(g.open());
   BOOST_TEST(!g.probing());
   // And it closes again on the next timeout, with a new probe.
   BOOST_TEST(g.on_timeout());
}

BOOST_AUTO_TEST_CASE(a_failed_probe_is_sent_again_while_silent)
{
   silence_gate g;
   (void)g.on_timeout();
   BOOST_TEST(g.on_probe(false));
   BOOST_TEST(!g.open());
   BOOST_TEST(g.probing());
   BOOST_TEST(!g.on_probe(true));
   BOOST_TEST(g.open());
}

BOOST_AUTO_TEST_CASE(an_earlier_calls_answer_opens_it_too_and_one_probe_stays_on_its_way)
{
   silence_gate g;
   (void)g.on_timeout();
   g.on_answer();  // a slow node caught up
   BOOST_TEST(g.open());
   BOOST_TEST(g.probing());
   // Silent again before the first probe came back: that probe still stands for it.
   BOOST_TEST(!g.on_timeout());
   BOOST_TEST(!g.on_probe(true));
   BOOST_TEST(g.open());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_silence_gate
