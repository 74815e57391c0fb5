# pfx_version_header: an interface target giving <cli/version.h> (PFX_VERSION, PFX_GIT_COMMIT,
# PFX_GIT_DIRTY) to every tool that reports its version (prefill, landing, kerneltrace). The
# commit is stamped at build time, not configure time (cmake/WriteVersion.cmake): a build folder
# reused across commits still reports the commit it was built from.
set(PFX_VERSION_HEADER_DIR ${PROJECT_BINARY_DIR}/generated)
add_custom_target(pfx_version
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DIN=${PROJECT_SOURCE_DIR}/cmake/version.h.in
          -DOUT=${PFX_VERSION_HEADER_DIR}/cli/version.h -DPFX_VERSION=${PROJECT_VERSION}
          -P ${PROJECT_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${PFX_VERSION_HEADER_DIR}/cli/version.h
  COMMENT "stamping the commit into cli/version.h")
add_library(pfx_version_header INTERFACE)
target_include_directories(pfx_version_header INTERFACE ${PFX_VERSION_HEADER_DIR})
add_dependencies(pfx_version_header pfx_version)
