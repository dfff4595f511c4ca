// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_REPORT_HPP
#define LOCKSMITH_REPORT_HPP

#include <locksmith/error.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace locksmith {

/// How one node answered in an attempt.
enum class node_vote {
   none,    ///< no answer before the attempt was decided
   yes,     ///< took (or released, or extended) the key
   no,      ///< the key was held by another owner, or was missing
   failed,  ///< an error: down, timed out, or an error reply
};

/// One node's part in the last attempt of an operation.
struct node_report {
   std::string node;                     ///< the node's URL, without its password
   node_vote vote = node_vote::none;     ///< how it voted
   std::chrono::microseconds latency{};  ///< time to its answer, when it answered
   error_code ec;                        ///< transport error or timeout, when it failed
   std::string message;  ///< the server's error text, or the last connection problem

   /// What went wrong at this node, as "URL: what": its call's failure (a timeout, a refused
   /// connection), then the server's error text or the connection's last problem; or empty when
   /// nothing did.
   std::string problem() const
   {
      if (!ec && message.empty())
         return {};
      std::string what = node + ": ";
      if (ec)
         what += ec.message() + (message.empty() ? "" : ", ");
      return what + message;
   }
};

/// Why an operation ended as it did, node by node, for callers who want to know (as Boost.MySQL's
/// `diagnostics`). An acquisition writes the one that lock_options::diag points to; an unlock or
/// an extend, the one given to the overload that takes it. It is overwritten by each attempt.
struct report {
   std::size_t attempts = 0;        ///< acquire attempts made (1 for unlock and extend)
   std::vector<node_report> nodes;  ///< the last attempt, one entry per node, in config order

   /// The problem() of the first node where something went wrong, or empty.
   std::string message() const
   {
      for (auto const& n : nodes)
         if (auto p = n.problem(); !p.empty())
            return p;
      return {};
   }
};

}  // namespace locksmith

#endif
