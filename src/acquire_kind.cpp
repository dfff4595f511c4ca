// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/acquire_kind.hpp>

#include "client_core.hpp"
#include "spawn.hpp"

namespace locksmith::detail {

void async_acquire_kind(std::shared_ptr<client_core> const& core, lease_kind kind, std::string name,
                        lock_options opts, report* diag, lease_handler h)
{
   if (diag)
      *diag = report{};
   // A lock asked for fair is the fair lock (lock_options::fair).
   if (opts.fair && kind.what == lease_kind::of::lock)
      kind.what = lease_kind::of::fair;
   // Each completion holds the core, which the coroutine uses, until the operation is done.
   spawn(core->executor(), core->lock(std::move(name), std::move(opts), false, diag, kind),
         std::move(h), [core](lease_handler h, std::exception_ptr e, client_core::lock_result r) {
            if (e)
               return std::move(h)(code_of(e), lease{});
            std::move(h)(r.ec, std::move(r.held));
         });
}

}  // namespace locksmith::detail
