// Unit tests of the client's metrics and log lines without a client: histogram buckets, the
// Prometheus text (parsed back by test/support/prometheus.hpp), the labels of errors, what
// counts as which wake-up, and the log of a node's connection.
#include "transport/log.hpp"
#include "sansio/metrics.hpp"

#include "support/prometheus.hpp"

#include <locksmith/metrics.hpp>

#include <boost/asio/error.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

namespace test_metrics {

namespace {
using locksmith::error;
using locksmith::error_code;
using locksmith::log_level;
using namespace locksmith::detail;
using locksmith::test::parse_prometheus;

// The lines a logger received.
struct captured {
   std::vector<std::pair<log_level, std::string>> lines;
   locksmith::config config(log_level min = log_level::debug)
   {
      locksmith::config cfg;
      cfg.logger = [this](log_level l, std::string_view s) { lines.emplace_back(l, s); };
      cfg.min_log_level = min;
      return cfg;
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics)

BOOST_AUTO_TEST_CASE(a_value_falls_in_the_first_bucket_whose_bound_is_at_least_the_value)
{
   locksmith::histogram h{.bounds = {0.001, 0.01, 0.1}};
   for (double v : {0.0, 0.001, 0.0011, 0.01, 0.1, 0.2, 50.0})
      h.record(v);
   BOOST_TEST(h.counts == (std::vector<std::uint64_t>{2, 2, 1, 2}),
              boost::test_tools::per_element());
   BOOST_TEST(h.count == 7u);
   BOOST_TEST(h.sum == 50.3121, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(an_empty_snapshot_renders_as_valid_prometheus_text)
{
   auto const t = parse_prometheus(locksmith::to_prometheus(empty_metrics()));
   BOOST_TEST(t.types.at("locksmith_acquisitions_total") == "counter");
   BOOST_TEST(t.types.at("locksmith_lock_wait_seconds") == "histogram");
   BOOST_TEST(*t.value("locksmith_acquisitions_total") == 0);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "+Inf"}}) == 0);
   BOOST_TEST(*t.value("locksmith_wakes_total", {{"source", "ttl_timer"}}) == 0);
}

BOOST_AUTO_TEST_CASE(counters_histograms_and_labels_render_as_prometheus_reads_them)
{
   auto m = empty_metrics();
   m.acquisitions = 7;
   m.failures.push_back({error::wait_timeout, error_label(error::wait_timeout), 3});
   for (double v : {0.0002, 0.003, 0.003, 20.0})
      m.wait.record(v);
   m.hold.record(0.5);
   m.leases_lost = 1;
   m.wakes.message = 4;
   m.retries_lost = 6;
   m.votes.push_back({R"(redis://u:***@host"1\)", 5, 1, 2, 3});
   auto const text = locksmith::to_prometheus(m);
   auto const t = parse_prometheus(text);
   BOOST_TEST(*t.value("locksmith_acquisitions_total") == 7);
   BOOST_TEST(*t.value("locksmith_lock_failures_total", {{"error", "wait_timeout"}}) == 3);
   // Cumulative buckets: 0.0002 is below 0.00025, the two 0.003 below 0.005, 20 only in +Inf.
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "0.0001"}}) == 0);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "0.00025"}}) == 1);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "0.005"}}) == 3);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "10"}}) == 3);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_bucket", {{"le", "+Inf"}}) == 4);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_count") == 4);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_sum") == 20.0062,
              boost::test_tools::tolerance(1e-9));
   BOOST_TEST(*t.value("locksmith_leases_lost_total") == 1);
   BOOST_TEST(*t.value("locksmith_wakes_total", {{"source", "message"}}) == 4);
   BOOST_TEST(*t.value("locksmith_retries_lost_total") == 6);
   // A label value with a quote and a backslash comes back as it was.
   auto const node = std::string{R"(redis://u:***@host"1\)"};
   BOOST_TEST(*t.value("locksmith_node_votes_total", {{"node", node}, {"vote", "failed"}}) == 2);
   BOOST_TEST(*t.value("locksmith_node_votes_total", {{"node", node}, {"vote", "none"}}) == 3);
   BOOST_TEST(text.find("# TYPE locksmith_lease_hold_seconds histogram\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_parser_refuses_what_a_scrape_would_refuse)
{
   using locksmith::test::parse_prometheus;
   BOOST_CHECK_THROW(parse_prometheus("x_total 1\n"), std::runtime_error);  // no TYPE
   BOOST_CHECK_THROW(parse_prometheus("# TYPE x counter\nx 1\n"), std::runtime_error);
   BOOST_CHECK_THROW(parse_prometheus("# TYPE x_total counter\nx_total one\n"), std::runtime_error);
   BOOST_CHECK_THROW(parse_prometheus("# TYPE h histogram\nh_bucket{le=\"1\"} 2\n"
                                      "h_bucket{le=\"+Inf\"} 1\nh_count 1\n"),
                     std::runtime_error);
   BOOST_CHECK_NO_THROW(parse_prometheus("# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
                                         "h_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"));
}

BOOST_AUTO_TEST_CASE(errors_are_labelled_by_name)
{
   BOOST_TEST(error_label(error::invalid_argument) == "invalid_argument");
   BOOST_TEST(error_label(error::wait_timeout) == "wait_timeout");
   BOOST_TEST(error_label(error::tls_failed) == "tls_failed");
   BOOST_TEST(error_label(error::not_enough_replicas) == "not_enough_replicas");
   BOOST_TEST(error_label(boost::asio::error::operation_aborted) == "operation_aborted");
   BOOST_TEST(error_label(boost::asio::error::connection_refused) == "system:111");
}

BOOST_AUTO_TEST_CASE(a_wake_counts_as_its_step_and_cause)
{
   locksmith::wake_counts w;
   count_wake(w, next_step::sleep_until_release, true);
   count_wake(w, next_step::retry_now, true);
   count_wake(w, next_step::sleep_until_release, false);
   count_wake(w, next_step::sleep_spin, false);
   count_wake(w, next_step::draw_lots, false);
   count_wake(w, next_step::await_subscription, true);
   count_wake(w, next_step::give_up, false);
   BOOST_TEST(w.message == 2u);
   BOOST_TEST(w.ttl_timer == 1u);
   BOOST_TEST(w.spin == 1u);
   BOOST_TEST(w.lots == 1u);
   BOOST_TEST(w.subscription == 1u);
}

BOOST_AUTO_TEST_CASE(a_line_is_formatted_only_when_a_logger_takes_it)
{
   int made = 0;
   auto make = [&] {
      ++made;
      return std::string{"x"};
   };
   log_sink{}(log_level::error, make);  // no logger
   captured c;
   log_sink const at_info{c.config(log_level::info)};
   at_info(log_level::debug, make);  // below the level
   BOOST_TEST(made == 0);
   at_info(log_level::warning, make);
   BOOST_TEST(made == 1);
   BOOST_TEST(c.lines.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_logger_copied_with_the_config_is_one_logger)
{
   int last = 0;
   locksmith::config cfg;
   // A logger with state of its own: each copy of the config must reach the same state.
   cfg.logger = [n = 0, &last](log_level, std::string_view) mutable { last = ++n; };
   share_logger(cfg);
   auto const copy = cfg;
   log_sink{cfg}(log_level::error, [] { return std::string{"a"}; });
   log_sink{copy}(log_level::error, [] { return std::string{"b"}; });
   BOOST_TEST(last == 2);
}

BOOST_AUTO_TEST_CASE(a_node_that_keeps_failing_is_a_warning_once_until_it_connects_again)
{
   captured c;
   connection_log log{log_sink{c.config()}, "redis://u:***@h:1 (commands)", "s3cret"};
   log.on_line(false, "Trying to connect to Redis server");  // not passed on
   log.on_line(true, "Failed to connect to Redis server: refused");
   log.on_line(true, "Failed to connect to Redis server: refused");
   log.on_line(false, "Connected to 127.0.0.1:1");
   log.on_line(true, "Setup failed: AUTH u s3cret");
   BOOST_TEST_REQUIRE(c.lines.size() == 4u);
   BOOST_TEST((c.lines[0].first == log_level::warning));
   BOOST_TEST(c.lines[0].second == "redis://u:***@h:1 (commands): Failed to connect to Redis "
                                   "server: refused");
   BOOST_TEST((c.lines[1].first == log_level::debug));
   BOOST_TEST((c.lines[2].first == log_level::info));
   BOOST_TEST((c.lines[3].first == log_level::warning));
   BOOST_TEST(c.lines[3].second.find("s3cret") == std::string::npos);
   BOOST_TEST(c.lines[3].second.find("AUTH u ***") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_metrics
