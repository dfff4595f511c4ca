#include "support/prometheus.hpp"

#include <cctype>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace locksmith::test {
namespace {

[[noreturn]] void fail(std::string_view why, std::string_view line)
{
   throw std::runtime_error("prometheus text: " + std::string{why} + ": " + std::string{line});
}

bool name_char(char c, bool first)
{
   auto const u = static_cast<unsigned char>(c);
   return std::isalpha(u) || c == '_' || c == ':' || (!first && std::isdigit(u));
}

// Reads a metric or label name at the front of `s`.
std::string take_name(std::string_view& s, std::string_view line)
{
   std::size_t n = 0;
   while (n < s.size() && name_char(s[n], n == 0))
      ++n;
   if (n == 0)
      fail("expected a name", line);
   std::string name{s.substr(0, n)};
   s.remove_prefix(n);
   return name;
}

// Reads `{a="x",b="y"}` at the front of `s`, if there.
std::map<std::string, std::string> take_labels(std::string_view& s, std::string_view line)
{
   std::map<std::string, std::string> labels;
   if (s.empty() || s.front() != '{')
      return labels;
   s.remove_prefix(1);
   while (!s.empty() && s.front() != '}') {
      auto const key = take_name(s, line);
      if (s.size() < 2 || s[0] != '=' || s[1] != '"')
         fail("expected =\"", line);
      s.remove_prefix(2);
      std::string value;
      for (;;) {
         if (s.empty())
            fail("unterminated label value", line);
         char const c = s.front();
         s.remove_prefix(1);
         if (c == '"')
            break;
         if (c == '\\') {
            if (s.empty() || (s.front() != '\\' && s.front() != '"' && s.front() != 'n'))
               fail("bad escape", line);
            value += s.front() == 'n' ? '\n' : s.front();
            s.remove_prefix(1);
         } else {
            value += c;
         }
      }
      if (!labels.emplace(key, value).second)
         fail("label given twice", line);
      if (!s.empty() && s.front() == ',')
         s.remove_prefix(1);
   }
   if (s.empty())
      fail("unterminated labels", line);
   s.remove_prefix(1);
   return labels;
}

double take_value(std::string_view s, std::string_view line)
{
   if (s.empty() || s.front() != ' ')
      fail("expected a space before the value", line);
   std::string const text{s.substr(1, s.find(' ', 1) == s.npos ? s.npos : s.find(' ', 1) - 1)};
   if (text == "+Inf" || text == "-Inf")
      return (text[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
   char* end = nullptr;
   double const v = std::strtod(text.c_str(), &end);
   if (text.empty() || end != text.c_str() + text.size())
      fail("bad value", line);
   return v;
}

std::string family_of(prometheus_text const& t, std::string const& name)
{
   if (t.types.count(name))
      return name;
   for (std::string_view suffix : {"_bucket", "_sum", "_count"})
      if (name.ends_with(suffix)) {
         auto base = name.substr(0, name.size() - suffix.size());
         auto it = t.types.find(base);
         if (it != t.types.end() && it->second == "histogram")
            return base;
      }
   return {};
}

void comment(prometheus_text& t, std::string_view line)
{
   std::string_view s = line.substr(1);
   if (!s.starts_with(" TYPE ") && !s.starts_with(" HELP "))
      return;  // other comments are allowed
   bool const type = s.starts_with(" TYPE ");
   s.remove_prefix(6);
   auto const name = take_name(s, line);
   if (!type)
      return;
   std::string const kind{s.starts_with(" ") ? s.substr(1) : s};
   if (kind != "counter" && kind != "gauge" && kind != "histogram" && kind != "summary" &&
       kind != "untyped")
      fail("unknown type", line);
   if (kind == "counter" && !name.ends_with("_total"))
      fail("a counter's name should end in _total", line);
   if (!t.types.emplace(name, kind).second)
      fail("family typed twice", line);
}

void check_histograms(prometheus_text const& t)
{
   for (auto const& [family, kind] : t.types) {
      if (kind != "histogram")
         continue;
      // Buckets per label set other than le, in order.
      std::map<std::map<std::string, std::string>, std::vector<prometheus_sample const*>> series;
      for (auto const& s : t.samples)
         if (s.name == family + "_bucket") {
            auto key = s.labels;
            if (!key.erase("le"))
               fail("a bucket without le", family);
            series[key].push_back(&s);
         }
      for (auto const& [labels, buckets] : series) {
         for (std::size_t i = 1; i < buckets.size(); ++i)
            if (buckets[i]->value < buckets[i - 1]->value)
               fail("buckets not cumulative", family);
         auto const count = t.value(family + "_count", labels);
         if (buckets.back()->labels.at("le") != "+Inf" || !count || *count != buckets.back()->value)
            fail("the +Inf bucket is missing or differs from _count", family);
      }
   }
}

}  // namespace

std::optional<double> prometheus_text::value(std::string_view name,
                                             std::map<std::string, std::string> const& labels) const
{
   for (auto const& s : samples)
      if (s.name == name && s.labels == labels)
         return s.value;
   return std::nullopt;
}

prometheus_text parse_prometheus(std::string_view text)
{
   prometheus_text t;
   while (!text.empty()) {
      auto const end = text.find('\n');
      if (end == text.npos)
         fail("the last line has no newline", text);
      auto const line = text.substr(0, end);
      text.remove_prefix(end + 1);
      if (line.empty())
         continue;
      if (line.front() == '#') {
         comment(t, line);
         continue;
      }
      std::string_view s = line;
      prometheus_sample sample;
      sample.name = take_name(s, line);
      sample.labels = take_labels(s, line);
      sample.value = take_value(s, line);
      if (family_of(t, sample.name).empty())
         fail("a sample before its family's TYPE", line);
      t.samples.push_back(std::move(sample));
   }
   check_histograms(t);
   return t;
}

}  // namespace locksmith::test
