// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/spawn.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include <new>
#include <system_error>

namespace locksmith::detail {

bool running_on(boost::asio::any_io_executor const& ex) noexcept
{
   namespace asio = boost::asio;
   using io = asio::io_context::executor_type;
   if (auto const* s = ex.target<asio::strand<io>>())
      return s->running_in_this_thread();
   if (auto const* s = ex.target<asio::strand<asio::any_io_executor>>())
      return s->running_in_this_thread();
   if (auto const* e = ex.target<io>())
      return e->running_in_this_thread();
   return false;
}

error_code code_of(std::exception_ptr e)
{
   try {
      std::rethrow_exception(e);
   } catch (boost::system::system_error const& x) {
      return x.code();
   } catch (std::system_error const& x) {
      return error_code{x.code().value(), boost::system::generic_category()};
   } catch (std::bad_alloc const&) {
      return make_error_code(boost::system::errc::not_enough_memory);
   }
}

}  // namespace locksmith::detail
