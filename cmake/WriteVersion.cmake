# Run at every build (cmake -P): writes the commit the sources are at into version.h, touching the
# file only when it changes, so `prefill --version --json` never reports a stale commit.
# Inputs: SRC (source dir), IN (template), OUT (header), PFX_VERSION.
set(PFX_GIT_COMMIT "unknown")
set(PFX_GIT_DIRTY "false")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(PFX_GIT_COMMIT "${_sha}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _st OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT "${_st}" STREQUAL "")
    set(PFX_GIT_DIRTY "true")
  endif()
endif()
set(PROJECT_VERSION "${PFX_VERSION}")
configure_file(${IN} ${OUT} @ONLY)
