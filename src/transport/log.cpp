// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/log.hpp"

#include <memory>

namespace locksmith::detail {

std::shared_ptr<log_function> share_logger(config& cfg)
{
   if (!cfg.logger)
      return nullptr;
   auto f = std::make_shared<log_function>(std::move(cfg.logger));
   cfg.logger = [f](log_level l, std::string_view line) {
      if (*f)
         (*f)(l, line);
   };
   return f;
}

void connection_log::on_line(bool problem, std::string_view line)
{
   bool const connected = line.starts_with("Connected to");
   if (!problem && !connected)
      return;
   auto const level = connected  ? log_level::info
                      : failing_ ? log_level::debug
                                 : log_level::warning;
   failing_ = !connected;
   sink_(level, [&] {
      std::string text = label_ + ": " + std::string{line};
      for (auto at = secret_.empty() ? text.npos : text.find(secret_); at != text.npos;
           at = text.find(secret_, at + 3))
         text.replace(at, secret_.size(), "***");
      return text;
   });
}

std::shared_ptr<connection_log> make_connection_log(config const& cfg, node_url const& url,
                                                    std::string_view what)
{
   auto label = redacted(url) + " (" + std::string{what} + ")";
   return std::make_shared<connection_log>(log_sink{cfg}, std::move(label), url.password);
}

boost::redis::logger make_logger(std::shared_ptr<link_health> health,
                                 std::shared_ptr<connection_log> log,
                                 std::shared_ptr<std::function<void()>> on_connected)
{
   using level = boost::redis::logger::level;
   return boost::redis::logger{
      level::info, [health, log, on_connected](level l, std::string_view msg) {
         health->on_log(l <= level::warning, msg);
         log->on_line(l <= level::warning, msg);
         if (on_connected && *on_connected && msg.starts_with("Connected to"))
            (*on_connected)();
      }};
}

}  // namespace locksmith::detail
