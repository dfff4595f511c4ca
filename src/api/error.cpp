// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/error.hpp>

#include <string>

namespace locksmith {
namespace {

struct category final : boost::system::error_category {
   const char* name() const noexcept override { return "locksmith"; }

   std::string message(int ev) const override
   {
      switch (static_cast<error>(ev)) {
      case error::invalid_argument:
         return "invalid argument";
      case error::lock_taken:
         return "the lock is held by another owner";
      case error::wait_timeout:
         return "the lock was not acquired within the wait";
      case error::quorum_unreachable:
         return "too few Redis nodes answered to reach a quorum";
      case error::lease_lost:
         return "the lease was lost before it was released";
      case error::not_owner:
         return "the lock is held by another owner (our lease had expired)";
      case error::lease_expired:
         return "the lease had already expired";
      case error::not_held:
         return "the lease is not held";
      case error::unexpected_reply:
         return "a Redis node sent an unexpected reply";
      case error::validity_expired:
         return "no validity was left after the quorum was won";
      case error::auth_failed:
         return "a Redis node refused the user, the password or a command (ACL)";
      case error::tls_failed:
         return "the TLS handshake with a Redis node failed";
      case error::not_enough_replicas:
         return "the write reached too few replicas (config::wait_replicas)";
      }
      return "unknown locksmith error";
   }
};

}  // namespace

const boost::system::error_category& error_category() noexcept
{
   static const category instance;
   return instance;
}

}  // namespace locksmith
