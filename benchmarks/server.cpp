// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "server.hpp"

#include "sansio/url.hpp"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {

using namespace std::chrono_literals;

std::optional<std::string> blocking_command(std::string const& url,
                                            std::vector<std::string> const& args)
{
   auto const u = detail::parse_url(url);
   if (!u || u->tls)
      return std::nullopt;
   try {
      test::blocking_client c{u->host, u->port, 2s};
      if (!u->password.empty()) {
         auto const auth = u->user.empty() ? c.command({"AUTH", u->password})
                                           : c.command({"AUTH", u->user, u->password});
         if (auth.type == test::reply::kind::error)
            return "-" + auth.str;
      }
      auto const r = c.command(args);
      if (r.type == test::reply::kind::error)
         return "-" + r.str;
      if (r.type == test::reply::kind::nil)
         return std::string{};
      if (r.type != test::reply::kind::array)
         return test::reply_text(r);
      std::string lines;  // an array's elements, one a line
      for (auto const& e : r.elements)
         lines +=
            (e.type == test::reply::kind::array ? std::string{"(array)"} : test::reply_text(e)) +
            "\n";
      return lines;
   } catch (std::runtime_error const&) {
      return std::nullopt;
   }
}

std::optional<std::map<std::string, command_stat>>
command_stats(std::vector<std::string> const& urls)
{
   std::map<std::string, command_stat> stats;
   for (auto const& url : urls) {
      auto const info = blocking_command(url, {"INFO", "commandstats"});
      if (!info || info->starts_with("-"))
         return std::nullopt;
      test::add_command_stats(*info, stats);
   }
   return stats;
}

std::optional<std::map<std::string, std::int64_t>>
command_calls(std::vector<std::string> const& urls)
{
   auto const stats = command_stats(urls);
   if (!stats)
      return std::nullopt;
   std::map<std::string, std::int64_t> calls;
   for (auto const& [name, st] : *stats)
      calls[name] = st.calls;
   return calls;
}

std::int64_t sum_calls(std::map<std::string, std::int64_t> const& calls, bool scripts_only)
{
   std::int64_t n = 0;
   for (auto const& [name, c] : calls)
      if (!scripts_only || test::run_by_scripts(name))
         n += c;
   return n;
}

std::optional<double> process_cpu_ms(pid_t pid)
{
   std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
   std::string text{std::istreambuf_iterator<char>{in}, {}};
   // The command name, field 2, is in parentheses and may hold spaces: count from its end.
   auto const close = text.rfind(')');
   if (close == std::string::npos)
      return std::nullopt;
   std::istringstream fields{text.substr(close + 2)};
   std::string skip;
   for (int field = 3; field < 14; ++field)
      fields >> skip;
   long long utime = 0, stime = 0;
   if (!(fields >> utime >> stime))
      return std::nullopt;
   return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

namespace {

// A later --bind replaces the launcher's own (127.0.0.1).
std::vector<std::string> bind_args(std::string const& also_bind)
{
   if (also_bind.empty())
      return {};
   return {"--bind", "127.0.0.1", also_bind, "--protected-mode", "no"};
}

}  // namespace

redis_process::redis_process(std::string also_bind)
    : srv_{bind_args(also_bind)}
{}

redis_process::~redis_process() = default;

void redis_process::pause()
{
   if (srv_.running())
      srv_.pause();
}

void redis_process::resume()
{
   srv_.resume();
   // The commands that queued up meanwhile come first: PONG means they have been worked off.
   auto const deadline = std::chrono::steady_clock::now() + 10s;
   while (blocking_command(url(), {"PING"}) != std::optional<std::string>{"PONG"}) {
      if (std::chrono::steady_clock::now() >= deadline)
         throw std::runtime_error("redis-server did not answer PING within 10 s of SIGCONT");
      std::this_thread::sleep_for(10ms);
   }
}

void redis_process::restart()
{
   srv_.restart();
}

}  // namespace locksmith::bench
