// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The client's logging (config::logger): a line is formatted only when someone will read it.
#ifndef LOCKSMITH_SRC_LOG_HPP
#define LOCKSMITH_SRC_LOG_HPP

#include <locksmith/config.hpp>
#include "sansio/url.hpp"
#include <locksmith/logger.hpp>

#include "sansio/link_health.hpp"

#include <boost/redis/logger.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace locksmith::detail {

/// Makes every copy of `cfg.logger` call the one function the user gave, so that the parts of a
/// client (and its nodes, which copy the config) share its state. Returns that function (null
/// without a logger): emptied by the client's destructor, after which no copy calls anything,
/// though the client's connections may still end and log later.
std::shared_ptr<log_function> share_logger(config& cfg);

/// Where a part of the client writes its lines: config::logger, from config::min_log_level on.
class log_sink {
public:
   log_sink() = default;
   explicit log_sink(config const& cfg)
       : fn_{cfg.logger}
       , min_{cfg.min_log_level}
   {}

   bool enabled(log_level l) const noexcept { return fn_ && l >= min_; }

   /// Calls `make()` for the line only when it is enabled. Never throws.
   template <class Make>
   void operator()(log_level l, Make&& make) const noexcept
   {
      if (!enabled(l))
         return;
      try {
         std::string const line = make();
         fn_(l, line);
      } catch (...) {  // a logger must not break the client
      }
   }

private:
   log_function fn_;
   log_level min_ = log_level::info;
};

/// Turns one connection's Boost.Redis log lines into ours, without flooding while a node is
/// down (it retries every config::reconnect_wait): the first problem after a connection was up
/// is a warning, later ones debug until it connects again; a new connection is info. Only lines
/// that Boost.Redis logs as a warning or worse, and its "Connected to" line, are passed on,
/// prefixed with the node's URL without its password; `secret` (the password) is masked in them.
class connection_log {
public:
   connection_log(log_sink sink, std::string label, std::string secret)
       : sink_{std::move(sink)}
       , label_{std::move(label)}
       , secret_{std::move(secret)}
   {}

   void on_line(bool problem, std::string_view line);

private:
   log_sink sink_;
   std::string label_;
   std::string secret_;
   bool failing_ = false;
};

/// The log of one of the node's connections (`what`: "commands" or "pub/sub").
std::shared_ptr<connection_log> make_connection_log(config const& cfg, node_url const& url,
                                                    std::string_view what);

/// The Boost.Redis logger of one of the node's connections. It keeps the last connection problem
/// (connection refused, timeout...) in `health`, so that a failed call can say why instead of only
/// "timed out", and learns from it when credentials or TLS fail; and it passes its lines to `log`.
/// Info level: the lines that say an attempt started and that its setup succeeded are info, and
/// come only once per connection attempt. With `on_connected`, it also reports each new
/// connection: Boost.Redis logs "Connected to ..." at info level once the socket is up, before any
/// request is written on it (the restart quarantine asks the server's uptime then).
boost::redis::logger make_logger(std::shared_ptr<link_health> health,
                                 std::shared_ptr<connection_log> log,
                                 std::shared_ptr<std::function<void()>> on_connected = nullptr);

}  // namespace locksmith::detail

#endif
