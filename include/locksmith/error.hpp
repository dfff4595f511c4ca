// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_ERROR_HPP
#define LOCKSMITH_ERROR_HPP

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace locksmith {

/// The error type of every operation: boost::system::error_code (see @ref locksmith::error).
using error_code = boost::system::error_code;

/// Outcomes of locksmith operations, in the category named "locksmith".
///
/// Expected outcomes (a held lock, a wait that ran out) are error codes, not exceptions. Errors
/// that come from Redis or the network (connection refused, a server error reply) keep their own
/// category where they pass through unchanged; see each operation for which it may produce.
enum class error {
   /// An argument or the configuration is malformed: empty or oversized key, TTL out of range,
   /// negative wait, no nodes, a malformed URL. Detected before any I/O, but for one case found
   /// when the client connects: a `redis+cluster://` node whose masters are older than Redis 7.0
   /// (no SPUBLISH, which a cluster's releases publish with). That one is reported at once, as
   /// auth_failed is, and the report names the master and what it lacks.
   invalid_argument = 1,

   /// The lock is held by someone else (`async_try_lock`, or a wait of zero).
   lock_taken,

   /// The lock was still held by others when the wait ran out.
   wait_timeout,

   /// Too few nodes answered for a quorum (one node of one, for a single-node client): they were
   /// down, hung past their timeout, or replied with an error; or a Redis Cluster's slot was in
   /// motion for the whole call (a reshard under way). Passing: a wait goes on trying. The
   /// report says which.
   quorum_unreachable,

   /// The lease was lost: its validity ran out before renewal succeeded, or the key was taken or
   /// deleted behind our back.
   lease_lost,

   /// Unlock or extend found the key held by another token: our lease had expired and someone
   /// else took the lock since.
   not_owner,

   /// Unlock or extend found no key: our lease had already expired (and nobody holds it now).
   lease_expired,

   /// The lease is not held by this process any more (already released, lost, or moved from).
   not_held,

   /// A node replied with something the protocol does not allow (for example a script that was
   /// replaced by another one under the same SHA, or a server error such as WRONGTYPE). The
   /// server's own message, when there is one, is in the report.
   unexpected_reply,

   /// The validity left after the quorum was won was not positive (the attempt took longer than
   /// the TTL minus the clock drift allowance).
   validity_expired,

   /// The server refused our credentials or our rights: a wrong user or password (WRONGPASS, at
   /// connection setup), or an ACL that denies a command, key or channel the lock needs
   /// (NOPERM). Reported once such nodes alone leave no quorum, without waiting: a retry would not
   /// mend it. The server's message is in the report.
   auth_failed,

   /// The TLS handshake with a node failed: its certificate is untrusted, expired or for another
   /// host name, or the server refused ours (mutual TLS), or a certificate or key file could not
   /// be loaded. Reported once such nodes alone leave no quorum, without waiting; the report names
   /// the node and the reason.
   tls_failed,

   /// The key was set, but fewer replicas than config::wait_replicas acknowledged it within
   /// config::replica_timeout (WAIT), on enough nodes to sink the quorum: a failover could have
   /// forgotten it, so it did not count and was released. The report says which nodes and how
   /// many replicas they reached.
   not_enough_replicas,
};

/// The "locksmith" error category.
const boost::system::error_category& error_category() noexcept;

/// Makes an error_code in the "locksmith" category.
inline error_code make_error_code(error e) noexcept
{
   return {static_cast<int>(e), error_category()};
}

}  // namespace locksmith

/// @cond
// Lets an error convert to an error_code (Boost.System's customisation point, not our API).
template <>
struct boost::system::is_error_code_enum<locksmith::error> : std::true_type {};
/// @endcond

#endif
