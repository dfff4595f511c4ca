#include "support/server_version.hpp"

#include "support/redis_server.hpp"

#include <cstdio>
#include <memory>
#include <regex>

namespace locksmith::test {
namespace {

struct probe {
   std::string product;  // "Redis" or "Valkey"
   std::optional<server_version> version;
};

probe run_version()
{
   auto const exe = find_redis_server();
   if (!exe)
      return {};
   // The path comes from the environment or PATH: quoted for the shell, single quotes escaped.
   std::string quoted = "'";
   for (char c : *exe)
      quoted += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
   quoted += "' --version 2>/dev/null";
   std::unique_ptr<FILE, int (*)(FILE*)> out{::popen(quoted.c_str(), "r"), ::pclose};
   if (!out)
      return {};
   std::string text;
   char buf[256];
   while (std::fgets(buf, sizeof buf, out.get()))
      text += buf;
   return {text.starts_with("Valkey") ? "Valkey" : "Redis", parse_server_version(text)};
}

probe const& probed()
{
   static probe const p = run_version();
   return p;
}

}  // namespace

std::optional<server_version> parse_server_version(std::string const& text)
{
   static std::regex const re{R"((\d+)\.(\d+)(?:\.(\d+))?)"};
   std::smatch m;
   if (!std::regex_search(text, m, re))
      return std::nullopt;
   return server_version{std::stoi(m[1]), std::stoi(m[2]), m[3].matched ? std::stoi(m[3]) : 0};
}

std::optional<server_version> redis_server_version()
{
   return probed().version;
}

std::vector<std::string> acl_channels(std::string const& pattern)
{
   auto const v = redis_server_version();
   if (v && *v < server_version{6, 2, 0})
      return {};
   return {"&" + pattern};
}

std::string redis_server_name()
{
   auto const& p = probed();
   if (!p.version)
      return "an unknown server";
   auto const& v = *p.version;
   return p.product + " " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
          std::to_string(v.patch);
}

}  // namespace locksmith::test
