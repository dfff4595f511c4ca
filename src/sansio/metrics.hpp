// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The pure parts of the client's metrics (include/locksmith/metrics.hpp): the buckets, the
// labels of errors, and what ended a waiter's sleep. Tested in test/unit/test_metrics.cpp.
#ifndef LOCKSMITH_SRC_METRICS_HPP
#define LOCKSMITH_SRC_METRICS_HPP

#include "sansio/retry.hpp"
#include <locksmith/error.hpp>
#include <locksmith/metrics.hpp>

#include <string>

namespace locksmith::detail {

/// A snapshot with nothing counted yet, and the buckets of each histogram: waits from 100 µs to
/// 10 s, holds from 1 ms to 5 min, renewal slack from 1 ms to 1 min (a renewal lands about
/// ttl × 2/3 before the key would expire; a small slack is the warning sign).
metrics_snapshot empty_metrics();

/// The label of an error in metrics: the enumerator's name for the locksmith category
/// (`wait_timeout`), `operation_aborted` and `timed_out` for Asio's, else `<category>:<value>`.
std::string error_label(error_code ec);

/// Counts a waiter's wake-up: after `step` (see next_after), by an event on the lock's channel
/// (a release message, a confirmation, a reconnect) or by its timer. A retry at once counts as
/// a message: an event had come since the try went out.
void count_wake(wake_counts& w, next_step step, bool by_event) noexcept;

}  // namespace locksmith::detail

#endif
