// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Umbrella header.
#ifndef LOCKSMITH_LOCKSMITH_HPP
#define LOCKSMITH_LOCKSMITH_HPP

#include <locksmith/client.hpp>
#include <locksmith/config.hpp>
#include <locksmith/error.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/logger.hpp>
#include <locksmith/metrics.hpp>
#include <locksmith/reentrant_lock.hpp>
#include <locksmith/report.hpp>
#include <locksmith/rw_lock.hpp>
#include <locksmith/semaphore.hpp>
#include <locksmith/with_lock.hpp>

#endif
