#include "support/command_stats.hpp"

#include <charconv>

namespace locksmith::test {
namespace {

// The number after `name` ("calls=") in a cmdstat line, or 0.
std::int64_t field(std::string_view line, std::string_view name)
{
   for (auto at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
      if (at == 0 || (line[at - 1] != ':' && line[at - 1] != ','))  // as in "failed_calls="
         continue;
      std::int64_t n = 0;
      std::from_chars(line.data() + at + name.size(), line.data() + line.size(), n);
      return n;
   }
   return 0;
}

}  // namespace

void add_command_stats(std::string_view info, command_stats& stats)
{
   constexpr std::string_view head = "cmdstat_";
   while (!info.empty()) {
      auto const eol = info.find('\n');
      auto line = info.substr(0, eol);
      info.remove_prefix(eol == std::string_view::npos ? info.size() : eol + 1);
      if (line.ends_with('\r'))
         line.remove_suffix(1);
      auto const colon = line.find(':');
      if (!line.starts_with(head) || colon == std::string_view::npos)
         continue;
      auto& st = stats[std::string{line.substr(head.size(), colon - head.size())}];
      st.calls += field(line, "calls=");
      st.failed += field(line, "failed_calls=");
   }
}

}  // namespace locksmith::test
