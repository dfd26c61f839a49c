# Writes OUTPUT, a C++ file defining the git commit the build is of, at every build; the file
# is rewritten only when the text changes, so an unchanged commit recompiles nothing.
#   -DSOURCE=<checkout> -DOUTPUT=<file.cpp> [-DCOMMIT=<text>: a source tree without .git,
#   e.g. a release tarball: the commit the packager names]
if(NOT COMMIT)
  find_program(GIT_EXECUTABLE git)
  set(COMMIT "unknown")
  if(GIT_EXECUTABLE AND EXISTS "${SOURCE}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE head_status ERROR_QUIET)
    if(head_status EQUAL 0 AND head)
      set(COMMIT "${head}")
      # Tracked files edited since the commit: the build is not exactly that commit.
      execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE}" diff-index --quiet HEAD --
                      RESULT_VARIABLE dirty ERROR_QUIET)
      if(NOT dirty EQUAL 0)
        string(APPEND COMMIT "-modified")
      endif()
    endif()
  endif()
endif()
set(text "// Generated at build time by validator/src/version/write_commit.cmake.\n#include <string_view>\n\nnamespace ggufcheck::detail {\nextern const std::string_view kGitCommit;\nconst std::string_view kGitCommit = \"${COMMIT}\";\n}  // namespace ggufcheck::detail\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
