// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_LINK_HEALTH_HPP
#define LOCKSMITH_DETAIL_LINK_HEALTH_HPP

#include <locksmith/error.hpp>

#include <string>
#include <string_view>

namespace locksmith::detail {

/// True for a server error that refuses our credentials or our rights: WRONGPASS, NOAUTH or
/// NOPERM (an ACL that denies a command, a key or a channel).
bool is_auth_error(std::string_view server_message) noexcept;

/// What one connection's attempts to reach its node have taught: the last problem, for messages,
/// and whether the last attempt failed in a way that retrying will not mend (the server refused
/// our credentials, or the TLS handshake failed). Fed by the connection's logger and its TLS
/// callbacks, read when a call on the connection fails. No I/O.
///
/// Boost.Redis reports a failed setup (HELLO with AUTH) only through its logger, so the lines are
/// read by their 1.92 wording; another wording loses only the classification (the failure then
/// reads as quorum_unreachable, as before), never a line.
class link_health {
public:
   /// A line of the connection's logger; `problem`: logged as a warning or worse.
   void on_log(bool problem, std::string_view line);

   /// The TLS layer found a problem in the current attempt: the verification's reason, or an
   /// alert. The first one of an attempt is kept: it is the cause, later ones its consequences.
   void on_tls_problem(std::string_view what);

   /// A file of the TLS settings could not be loaded: every attempt will fail, for this reason.
   void on_tls_config_problem(std::string what);

   std::string const& last_problem() const noexcept { return last_problem_; }

   /// The server's error to the connection's health check (its PING), from the line that says
   /// so until the next attempt starts; empty otherwise. Boost.Redis ends the connection then, so
   /// a call in flight meets that end: this is its cause, and the line stays the last problem
   /// until another line than those of that end reports one. A server that loads its data set
   /// answers LOADING (next_eval_step).
   std::string const& refused_ping() const noexcept { return refused_ping_; }

   /// The server that the connection reached last ("host:port", as configured or as the
   /// Sentinels named it), and how many times it connected so far: a Sentinel node follows a
   /// switch of master by them (master_follow). Empty and 0 before the first connection.
   std::string const& server() const noexcept { return server_; }
   unsigned connections() const noexcept { return connections_; }
   /// True from a connection until it fails (a read error) or an attempt fails: false while the
   /// server is out of reach (and before the first connection), when a request only queues.
   bool up() const noexcept { return up_; }

   /// auth_failed or tls_failed while the last attempt failed so; else no error.
   error_code lasting() const noexcept { return lasting_; }
   /// The reason of lasting(): the server's message, or the TLS problem.
   std::string const& lasting_message() const noexcept { return lasting_message_; }

private:
   void set_lasting(error e, std::string message);
   void clear_lasting() noexcept;

   std::string last_problem_;
   std::string refused_ping_;
   std::string server_;
   unsigned connections_ = 0;
   bool up_ = false;
   std::string tls_attempt_;  // the TLS problem of the current attempt, if any
   std::string tls_config_;   // a TLS file that cannot be loaded: every attempt fails
   error_code lasting_;
   std::string lasting_message_;
};

}  // namespace locksmith::detail

#endif
