// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_LEASE_KIND_HPP
#define LOCKSMITH_DETAIL_LEASE_KIND_HPP

#include <cstddef>
#include <string>

namespace locksmith::detail {

/// What a lease holds: the exclusive lock (client::async_lock), the fair lock (the same with
/// lock_options::fair), a permit of a semaphore
/// (semaphore.hpp), a side of a read-write lock (rw_lock.hpp), or a hold of a reentrant lock
/// (reentrant_lock.hpp). It picks the scripts that take,
/// renew and give the lease back, and the quorum; the rest of the machinery (fan-out, waiting,
/// watchdog, release) is the same for all.
struct lease_kind {
   enum class of { lock, fair, permit, read, write, reentrant };
   of what = of::lock;
   std::size_t permits = 1;  // of::permit: how many holders at once
   std::string owner{};      // of::reentrant: who holds; never empty

   /// Several holders at once: a holder does not keep the name's place in the process's queue,
   /// so that the next coroutine of the process may contend at once.
   bool shared() const noexcept { return what == of::permit || what == of::read; }
};

}  // namespace locksmith::detail

#endif
