# Run at every build (cmake -P): writes the commit the sources are at (and the count of commits up
# to it) into version.h, touching the file only when it changes, so `prefill --version --json`
# never reports a stale commit.
# Inputs: SRC (source dir), IN (template), OUT (header), PFX_VERSION.
set(PFX_GIT_COMMIT "unknown")
set(PFX_GIT_DIRTY "false")
set(PFX_GIT_COUNT 0)
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(PFX_GIT_COMMIT "${_sha}")
  endif()
  # The number of commits up to HEAD: llama-bench's build_number (`prefill bench` reports it too).
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-list --count HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _count OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _count MATCHES "^[0-9]+$")
    set(PFX_GIT_COUNT "${_count}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _st OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT "${_st}" STREQUAL "")
    set(PFX_GIT_DIRTY "true")
  endif()
endif()
set(PROJECT_VERSION "${PFX_VERSION}")
configure_file(${IN} ${OUT} @ONLY)
