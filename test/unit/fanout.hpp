// What the tests of the fan-out (test_fanout*.cpp) share: fake nodes under a client_core, and the
// one lock they take.
#pragma once

#include "support/fake_cluster.hpp"
#include "support/print.hpp"

#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"

#include <boost/asio/as_tuple.hpp>
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

// What an unlock of the cluster's client completed with. (The operation is built apart from the
// co_await: GCC 12 destroys a temporary with a destructor twice when it stands in one.)
inline asio::awaitable<error_code>
unlock(cluster& c, std::shared_ptr<locksmith::detail::lease_state> st, locksmith::report* diag)
{
   auto op = c.core->async_unlock(st, diag, asio::as_tuple(asio::use_awaitable));
   auto [ec] = co_await std::move(op);
   co_return ec;
}

inline std::string const name = "orders/42";
inline std::string const key = locksmith::detail::lock_key("locksmith:", name);
