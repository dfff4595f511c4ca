// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/link_health.hpp"

namespace locksmith::detail {
namespace {

// Boost.Redis 1.92's log lines (boost/redis/impl/run_fsm.ipp, reader_fsm.ipp and writer_fsm.ipp).
constexpr std::string_view attempt_starts = "Trying to connect to Redis server";
constexpr std::string_view connected = "Connected to Redis server at ";
constexpr std::string_view connect_failed = "Failed to connect to Redis server";
constexpr std::string_view read_failed = "Error reading data from the server";
constexpr std::string_view write_failed = "Error writing data to the server";
constexpr std::string_view setup_failed = "Setup request execution failed: ";
constexpr std::string_view setup_done = "Setup request execution: success";
constexpr std::string_view ping_refused = "Health checker: server answered ping with an error: ";
constexpr std::string_view processing_failed = "Error processing message: ";

}  // namespace

bool is_auth_error(std::string_view m) noexcept
{
   return m.starts_with("WRONGPASS") || m.starts_with("NOAUTH") || m.starts_with("NOPERM");
}

void link_health::on_log(bool problem, std::string_view line)
{
   // A refused health check is the cause of the connection's end that follows it: the lines of
   // that end are its consequences. Any other problem (a Sentinel that cannot name the master,
   // the next attempt's) is news.
   bool const consequence =
      !refused_ping_.empty() && (line.starts_with(processing_failed) ||
                                 line.starts_with(read_failed) || line.starts_with(write_failed));
   if (problem && !consequence)
      last_problem_ = line;
   if (line.starts_with(attempt_starts)) {
      tls_attempt_.clear();
      refused_ping_.clear();
      up_ = false;
   } else if (line.starts_with(ping_refused)) {
      refused_ping_ = line.substr(ping_refused.size());
   } else if (line.starts_with(write_failed)) {
      up_ = false;
   } else if (line.starts_with(connected)) {
      // "Connected to Redis server at 127.0.0.1:6379 (TLS disabled)"
      auto const address = line.substr(connected.size());
      server_ = address.substr(0, address.find(' '));
      ++connections_;
      up_ = true;
   } else if (line.starts_with(setup_done)) {
      clear_lasting();
   } else if (line.starts_with(setup_failed)) {
      auto const diagnostic = line.substr(setup_failed.size());
      if (is_auth_error(diagnostic))
         set_lasting(error::auth_failed, std::string{diagnostic});
   } else if (line.starts_with(connect_failed) || line.starts_with(read_failed)) {
      up_ = false;
      // A server that refuses our certificate under TLS 1.3 does so after the handshake, so
      // the attempt ends with a read error; a refused or timed-out connection is no TLS problem.
      if (!tls_attempt_.empty())
         set_lasting(error::tls_failed, tls_attempt_);
      else if (line.starts_with(connect_failed))
         clear_lasting();
   }
}

void link_health::on_tls_problem(std::string_view what)
{
   if (!tls_attempt_.empty())
      return;
   tls_attempt_ = "TLS: ";
   tls_attempt_ += what;
   set_lasting(error::tls_failed, tls_attempt_);
}

void link_health::on_tls_config_problem(std::string what)
{
   tls_config_ = "TLS: " + std::move(what);
   set_lasting(error::tls_failed, {});
}

void link_health::set_lasting(error e, std::string message)
{
   lasting_ = e;
   // A file that cannot be loaded is the cause of whatever the handshakes then meet.
   lasting_message_ = tls_config_.empty() ? std::move(message) : tls_config_;
}

void link_health::clear_lasting() noexcept
{
   if (!tls_config_.empty())
      return;
   lasting_ = {};
   lasting_message_.clear();
}

}  // namespace locksmith::detail
