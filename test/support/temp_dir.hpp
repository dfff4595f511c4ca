// A fresh temporary directory, removed with everything in it when the object goes.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace locksmith::test {

struct temp_dir {
   std::filesystem::path path;

   // Named "<stem>-XXXXXX" in the system's temporary directory.
   explicit temp_dir(std::string const& stem = "locksmith")
   {
      std::string tmpl = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
      if (::mkdtemp(tmpl.data()) == nullptr)
         throw std::runtime_error("mkdtemp failed");
      path = tmpl;
   }
   ~temp_dir()
   {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
   }
   temp_dir(temp_dir const&) = delete;
   temp_dir& operator=(temp_dir const&) = delete;

   std::string file(std::string const& name) const { return (path / name).string(); }
};

}  // namespace locksmith::test
