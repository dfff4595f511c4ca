// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Umbrella header.
#ifndef LOCKSMITH_LOCKSMITH_HPP
#define LOCKSMITH_LOCKSMITH_HPP

#include <locksmith/client.hpp>
#include <locksmith/config.hpp>
#include <locksmith/error.hpp>
#include <locksmith/inspection.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/logger.hpp>
#include <locksmith/metrics.hpp>
#include <locksmith/reentrant_lock.hpp>
#include <locksmith/report.hpp>
#include <locksmith/rw_lock.hpp>
#include <locksmith/semaphore.hpp>
#include <locksmith/with_lock.hpp>

/// @namespace locksmith
/// Distributed locks for Boost.Asio programs, on Redis. Start with @ref locksmith::client, whose
/// members take every kind of lease (`async_lock`, `async_try_lock`, `async_read_lock`,
/// `async_write_lock`, `async_acquire_permit`, `async_lock_reentrant`) and give it back
/// (`async_unlock`, `async_extend`), @ref locksmith::lease and @ref locksmith::lock_options;
/// async_with_lock holds a lock around a body. docs/guarantees.md says what a lease guarantees.

#endif
