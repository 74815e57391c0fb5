# The commit a build comes from, baked into `prefill --version --json` so gates can talk to old builds.
find_package(Git QUIET)
set(PFX_GIT_COMMIT "unknown")
set(PFX_GIT_DIRTY "false")
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE _sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(PFX_GIT_COMMIT "${_sha}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE _st OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT "${_st}" STREQUAL "")
    set(PFX_GIT_DIRTY "true")
  endif()
endif()
