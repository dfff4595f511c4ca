// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The scripts of every lease kind, as the build embeds them from src/scripts/*.lua
// (cmake/embed_scripts.cmake, which also computes their SHA-1s and makes their sharded twins):
// here each gets its name, role and shape.
#include "sansio/inspection.hpp"
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"

#include "embedded_scripts.hpp"  // generated in the build tree

#include <array>
#include <cstddef>

namespace locksmith::detail {
namespace {

// A script and its twin for a Redis Cluster, which is the script itself when it publishes
// nothing.
struct entry {
   script plain;
   script sharded;
   bool publishes;
};

entry make(std::string_view name, lua::embedded_script const& e, script_role role,
           bool batched = false)
{
   bool const publishes = !e.sharded_text.empty();
   return {script{name, e.text, std::string{e.sha1}, role, batched, false, publishes},
           script{name, publishes ? e.sharded_text : e.text,
                  std::string{publishes ? e.sharded_sha1 : e.sha1}, role, batched, false,
                  publishes},
           publishes};
}

// In the order of every_script(), the lock's four first (all_scripts()).
enum class id : std::size_t {
   acquire,
   release,
   extend,
   set_acquire,
   set_extend,
   set_release,
   write_acquire,
   fair_acquire,
   fair_release,
   fair_requeue,
   reentrant_acquire,
   reentrant_extend,
   reentrant_release,
   inspect,
   count
};

using catalog_type = std::array<entry, static_cast<std::size_t>(id::count)>;

// Built together once (a magic static: clients on several threads may ask at once), for the
// program's life.
catalog_type const& catalog()
{
   using enum script_role;
   static catalog_type const all{
      make("acquire", lua::acquire, acquire),
      make("release", lua::release, release),
      make("extend", lua::extend, extend, true),
      make("semaphore acquire", lua::semaphore_acquire, acquire),
      make("semaphore extend", lua::semaphore_extend, extend),
      make("semaphore release", lua::semaphore_release, release),
      make("write acquire", lua::write_acquire, acquire),
      make("fair acquire", lua::fair_acquire, acquire),
      make("fair release", lua::fair_release, release),
      make("fair requeue", lua::fair_requeue, release),
      make("reentrant acquire", lua::reentrant_acquire, acquire),
      make("reentrant extend", lua::reentrant_extend, extend),
      make("reentrant release", lua::reentrant_release, release),
      make("inspect", lua::inspect, read),
   };
   return all;
}

script const& script_of(id i)
{
   return catalog()[static_cast<std::size_t>(i)].plain;
}

}  // namespace

script const& acquire_script()
{
   return script_of(id::acquire);
}
script const& release_script()
{
   return script_of(id::release);
}
script const& extend_script()
{
   return script_of(id::extend);
}
script const& set_acquire_script()
{
   return script_of(id::set_acquire);
}
script const& set_extend_script()
{
   return script_of(id::set_extend);
}
script const& set_release_script()
{
   return script_of(id::set_release);
}
script const& write_acquire_script()
{
   return script_of(id::write_acquire);
}
script const& fair_acquire_script()
{
   return script_of(id::fair_acquire);
}
script const& fair_release_script()
{
   return script_of(id::fair_release);
}
script const& fair_requeue_script()
{
   return script_of(id::fair_requeue);
}
script const& reentrant_acquire_script()
{
   return script_of(id::reentrant_acquire);
}
script const& reentrant_extend_script()
{
   return script_of(id::reentrant_extend);
}
script const& reentrant_release_script()
{
   return script_of(id::reentrant_release);
}

script const& inspect_script()
{
   return script_of(id::inspect);
}

std::array<script const*, 3> all_scripts()
{
   return {&acquire_script(), &release_script(), &extend_script()};
}

std::vector<script const*> every_script()
{
   std::vector<script const*> out;
   for (auto const& e : catalog())
      out.push_back(&e.plain);
   return out;
}

script const& sharded_twin(script const& s)
{
   for (auto const& e : catalog())
      if (&e.plain == &s)
         return e.publishes ? e.sharded : e.plain;
   return s;
}

std::vector<script const*> every_sharded_script()
{
   std::vector<script const*> out;
   for (auto const& e : catalog())
      if (e.publishes)
         out.push_back(&e.sharded);
   return out;
}

}  // namespace locksmith::detail
