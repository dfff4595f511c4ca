// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What a decided fan-out means: pure functions of its result, tested without sockets
// (test/unit/test_verdicts.cpp).
#ifndef LOCKSMITH_SRC_VERDICTS_HPP
#define LOCKSMITH_SRC_VERDICTS_HPP

#include "protocol/fanout.hpp"

#include <locksmith/error.hpp>
#include <locksmith/report.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace locksmith::detail {

/// auth_failed, tls_failed or invalid_argument (a Redis Cluster too old, cluster_node.hpp) when
/// the nodes that failed so are enough on their own to sink the quorum: waiting would not mend
/// them, so the operation says so at once. Else success.
error_code lasting_failure(fanout_result const& r);

/// Why an acquire attempt was lost: a lasting failure, lock_taken when some node said taken,
/// not_enough_replicas when the nodes whose write reached too few replicas are enough on their
/// own to sink the quorum, unexpected_reply on a server error, else quorum_unreachable.
error_code lost_reason(fanout_result const& r);

/// The outcome of a release or extend. When its quorum was not won, the key is blamed
/// (not_owner when some node holds another token, else lease_expired) only when the nodes that
/// found it gone or taken are enough on their own to sink the quorum: under RedLock a minority
/// of such answers sits beside a valid lease (nodes restarted empty), and then it is the
/// failures that lost the quorum, which a retry may mend. Then, as for lost_reason, a lasting
/// failure or not_enough_replicas when such nodes alone sink the quorum, unexpected_reply on a
/// server error, else quorum_unreachable.
error_code ownership_result(fanout_result const& r);

/// A fair waiter's split vote among waiters alone: some nodes said yes, and no token that holds
/// the key where the others said no can hold a quorum: each node that said no had only other
/// waiters first (acquire_reply::waiters_only), or a holder (acquire_reply::holder) that holds
/// too few nodes to have won, counting for it every node that did not answer. Waiters that head
/// the queues of different nodes (arrived together at a free key) then each take the key where
/// they head the queue, and wait for a handoff that the others would have to make.
bool split_among_waiters(fanout_result const& r);

/// The shortest time that a holder's key had left, among the nodes that said taken (-1: none).
std::chrono::milliseconds shortest_pttl(fanout_result const& r);

/// The latency of the slowest node that answered (yes or no).
std::chrono::microseconds slowest_reply(fanout_result const& r);

/// The highest fencing token among the nodes that said yes (0: none).
std::uint64_t highest_fence(fanout_result const& r);

/// The nodes, by index, that may hold the key an acquire attempt set: all but those that said
/// taken (they hold someone else's) and those it was never sent to (silent nodes). A node that
/// said yes, failed, or had not answered when the attempt was decided may hold it.
std::vector<bool> may_hold_key(fanout_result const& r, std::size_t nodes);

/// The nodes, by index, that had not answered when the fan-out was decided.
std::vector<std::size_t> unanswered_nodes(fanout_result const& r);

/// Adds the attempt's per-node results to the caller's report, if any.
void describe(fanout_result const& r, std::vector<std::shared_ptr<node>> const& nodes,
              report* diag);

}  // namespace locksmith::detail

#endif
