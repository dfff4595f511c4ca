# `cmake --install` puts the headers, the library and the CMake package under the prefix, so that
# other projects write find_package(locksmith 0.2 REQUIRED) and link locksmith::locksmith.
include(CMakePackageConfigHelpers)

set(locksmith_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/locksmith)

install(DIRECTORY include/locksmith TYPE INCLUDE)
install(TARGETS locksmith EXPORT locksmith_targets)
install(EXPORT locksmith_targets NAMESPACE locksmith:: FILE locksmithTargets.cmake
        DESTINATION ${locksmith_cmake_dir})

# Where the build found Boost, recorded in the package as a hint (locksmithConfig.cmake.in).
set(locksmith_boost_hint ${Boost_DIR})
configure_package_config_file(cmake/locksmithConfig.cmake.in
  ${PROJECT_BINARY_DIR}/locksmithConfig.cmake INSTALL_DESTINATION ${locksmith_cmake_dir})
# Before 1.0, a minor version may break the API: 0.2 accepts 0.2.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/locksmithConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/locksmithConfig.cmake
              ${PROJECT_BINARY_DIR}/locksmithConfigVersion.cmake
        DESTINATION ${locksmith_cmake_dir})
