// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_QUORUM_HPP
#define LOCKSMITH_DETAIL_QUORUM_HPP

#include <cstddef>

namespace locksmith::detail {

/// The majority of n nodes: n/2 + 1. One node is its own quorum.
constexpr std::size_t quorum_of(std::size_t n) noexcept
{
   return n / 2 + 1;
}

/// Where a fan-out stands.
enum class outcome { pending, won, lost };

/// Counts the votes of n nodes and decides as soon as the result is known: won when `quorum`
/// nodes said yes, lost as soon as so many said no (or failed) that the quorum cannot be reached.
class vote_counter {
public:
   explicit constexpr vote_counter(std::size_t nodes) noexcept
       : nodes_{nodes}
       , quorum_{quorum_of(nodes)}
   {}

   /// Records one node's vote; returns the outcome so far.
   constexpr outcome record(bool yes) noexcept
   {
      (yes ? yes_ : no_) += 1;
      return state();
   }

   constexpr outcome state() const noexcept
   {
      if (yes_ >= quorum_)
         return outcome::won;
      if (no_ > nodes_ - quorum_)
         return outcome::lost;
      return outcome::pending;
   }

   constexpr std::size_t yes() const noexcept { return yes_; }
   constexpr std::size_t no() const noexcept { return no_; }
   constexpr std::size_t pending() const noexcept { return nodes_ - yes_ - no_; }
   constexpr std::size_t quorum() const noexcept { return quorum_; }

private:
   std::size_t nodes_;
   std::size_t quorum_;
   std::size_t yes_ = 0;
   std::size_t no_ = 0;
};

}  // namespace locksmith::detail

#endif
