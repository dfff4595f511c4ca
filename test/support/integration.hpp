// What the integration test files start with: the library, the support helpers, and the names
// that every one of them uses. Test code only: it opens namespaces at file scope.
#pragma once

#include <locksmith/locksmith.hpp>

#include "support/config.hpp"
#include "support/fixture.hpp"
#include "support/keys.hpp"
#include "support/print.hpp"
#include "support/redis_server.hpp"
#include "support/run.hpp"
#include "support/tasks.hpp"

#include <boost/asio.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace utf = boost::unit_test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

using locksmith::error;
using locksmith::error_code;
using locksmith::lease;
using locksmith::node_vote;
using locksmith::test::countdown;
using locksmith::test::event;
using locksmith::test::eventually;
using locksmith::test::fence_key;
using locksmith::test::five_servers_fixture;
using locksmith::test::lock_key;
using locksmith::test::make_clients;
using locksmith::test::needs_redis_server;
using locksmith::test::redis_server;
using locksmith::test::release_channel;
using locksmith::test::run;
using locksmith::test::server_fixture;
using locksmith::test::servers_fixture;
using locksmith::test::sleep_for;
using locksmith::test::task_group;
using locksmith::test::test_config;
using locksmith::test::tuple;
using locksmith::test::unique_key;
using locksmith::test::yield;

/// `opts` whose acquisition writes its report to `diag` (lock_options::diag).
inline locksmith::lock_options with_report(locksmith::lock_options opts, locksmith::report& diag)
{
   opts.diag = &diag;
   return opts;
}

/// Starts an unlock of `l` beside the test and returns its outcome, empty until it completes
/// (shared with the handler, which a failed check would leave pending past the test's frame).
inline std::shared_ptr<std::optional<error_code>> unlock_beside(locksmith::client& c, lease& l)
{
   auto out = std::make_shared<std::optional<error_code>>();
   c.async_unlock(l, [out](error_code ec) { *out = ec; });
   return out;
}

/// Milliseconds, for messages.
inline double to_ms(clock_type::duration d)
{
   return std::chrono::duration<double, std::milli>(d).count();
}
