// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/acquire_kind.hpp>

#include "core/client_core.hpp"
#include "engines/spawn.hpp"

#include <utility>

namespace locksmith::detail {

void async_acquire_kind(std::shared_ptr<client_core> const& core, lease_kind kind, std::string name,
                        lock_options opts, lease_handler h, bool on_client)
{
   // The report travels beside the options from here on, so that no lease keeps a pointer to
   // it after the operation (the options are kept with the lease).
   report* const diag = std::exchange(opts.diag, nullptr);
   if (diag)
      *diag = report{};
   // A lock asked for fair is the fair lock (lock_options::fair).
   if (opts.fair && kind.what == lease_kind::of::lock)
      kind.what = lease_kind::of::fair;
   // From any thread: the lock starts on the client's executor (enter).
   enter(core->executor(), std::move(h),
         [core, kind = std::move(kind), name = std::move(name), opts = std::move(opts), diag,
          on_client](lease_handler h) mutable {
            core->lock(std::move(name), std::move(opts), false, diag, std::move(kind), std::move(h),
                       on_client);
         });
}

}  // namespace locksmith::detail
