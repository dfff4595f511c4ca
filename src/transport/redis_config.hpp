// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The Boost.Redis connection config for one node URL: address or Sentinels, TLS, HELLO with
// credentials and client name, SELECT, and the client's timeouts. Shared by the nodes and the raw
// benchmark.
#ifndef LOCKSMITH_SRC_REDIS_CONFIG_HPP
#define LOCKSMITH_SRC_REDIS_CONFIG_HPP

#include <locksmith/config.hpp>
#include "sansio/url.hpp"

#include <boost/redis/config.hpp>

#include <string>

namespace locksmith::detail {

/// `client_name` is what CLIENT LIST shows for the connection.
boost::redis::config make_redis_config(node_url const& url, config const& cfg,
                                       std::string const& client_name = "locksmith");

}  // namespace locksmith::detail

#endif
