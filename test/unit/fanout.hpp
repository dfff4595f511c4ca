// What the tests of the fan-out (test_fanout*.cpp) share: fake nodes under a client_core, and the
// one lock they take.
#pragma once

#include "support/fake_cluster.hpp"
#include "support/print.hpp"

#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/quorum.hpp>

#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using locksmith::error;
using locksmith::error_code;
using locksmith::node_vote;
using locksmith::test::fault;
using cluster = locksmith::test::fake_cluster;
using clock_type = std::chrono::steady_clock;

inline std::string const name = "orders/42";
inline std::string const key = locksmith::detail::lock_key("locksmith:", name);
