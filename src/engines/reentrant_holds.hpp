// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The reentrant holds of one client, by name: whether an owner holds a name already, so that its
// next hold does not queue behind the process's other contenders for the name (they wait for the
// owner, which would then wait for them). Lives on the client's executor.
#ifndef LOCKSMITH_SRC_REENTRANT_HOLDS_HPP
#define LOCKSMITH_SRC_REENTRANT_HOLDS_HPP

#include "engines/lease_state.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace locksmith::detail {

class reentrant_holds {
public:
   /// True when `owner` holds `name` by a lease not ended yet. Forgets the holds that ended, and
   /// the name with them once none is left.
   bool held_by(std::string const& name, std::string const& owner)
   {
      auto it = holds_.find(name);
      if (it == holds_.end())
         return false;
      std::erase_if(it->second, [](std::weak_ptr<lease_state> const& w) {
         auto st = w.lock();
         return !st || st->st != lease_state::status::held;
      });
      bool const held = std::any_of(it->second.begin(), it->second.end(),
                                    [&](auto const& w) { return w.lock()->kind.owner == owner; });
      if (it->second.empty())
         holds_.erase(it);
      return held;
   }

   /// A new hold of the name (weak: a hold ends with its lease).
   void add(std::string const& name, std::weak_ptr<lease_state> hold)
   {
      holds_[name].push_back(std::move(hold));
   }

   /// The names held (for tests).
   std::size_t size() const noexcept { return holds_.size(); }

private:
   std::unordered_map<std::string, std::vector<std::weak_ptr<lease_state>>> holds_;
};

}  // namespace locksmith::detail

#endif
