// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The completion token of the benchmarks' co_awaits that read an error rather than catch one.
#ifndef LOCKSMITH_BENCH_TOKENS_HPP
#define LOCKSMITH_BENCH_TOKENS_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace locksmith::bench {

inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace locksmith::bench

#endif
