# The Debian package: `cpack -G DEB` in a build tree makes one package, ggufcheck, of everything
# `cmake --install` installs (the command, its man page and completions, the library, its
# headers and CMake package files), under /usr. scripts/package.sh builds it with the `package`
# preset (CMAKE_INSTALL_PREFIX /usr, so that the libraries go where Debian's own do:
# CMAKE_INSTALL_LIBDIR is then lib/<multiarch triplet>) and checks what it holds.

set(CPACK_PACKAGE_NAME ggufcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The ggufcheck authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# One string (the Debian description's body), its lines at most 79 columns.
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "ggufcheck validates GGUF model files (the llama.cpp / ggml format) without\n"
  "trusting them: it never crashes, hangs or allocates what a hostile header\n"
  "claims, and reports every problem with a stable code, the byte offset and the\n"
  "field, as text, JSON or SARIF. It also shows what a model holds (info), hashes\n"
  "its tensor data (hash, verify) and prints a file's canonical JSON (dump).\n"
  "This package holds the ggufcheck command with its man page and bash, zsh and\n"
  "fish completions, the C++ library with its headers and CMake package files,\n"
  "the C interface (libggufcheck.so.0, ggufcheck.h) and, when it was built, the\n"
  "Python package (import ggufcheck).")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/ggufcheck/ggufcheck")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# The licence goes with the binaries, where Debian keeps a package's (/usr/share/doc/PACKAGE/).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
if(NOT CPACK_GENERATOR)
  set(CPACK_GENERATOR DEB)  # `cpack` alone makes the .deb
endif()
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# `cmake --install --strip`: the executable (and shared libraries), never the static library.
set(CPACK_STRIP_FILES ON)

set(GGUFCHECK_PACKAGE_MAINTAINER "The ggufcheck authors <https://github.com/ggufcheck/ggufcheck>"
    CACHE STRING "The Debian package's Maintainer field: NAME <ADDRESS>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GGUFCHECK_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CPACK_PACKAGE_HOMEPAGE_URL}")
# ggufcheck_0.1.0_amd64.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends from the libraries the binaries load (dpkg-shlibdeps, Debian: dpkg-dev); a shared
# library's own shlibs file, for the packages that link it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# libcurl is loaded when a URL is read (dlopen of libcurl.so.4), so dpkg-shlibdeps cannot see it.
if(GGUFCHECK_REMOTE)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4")
endif()
# The Python package's extension is for the python3 it was built with (Debian 12: 3.11); the
# command and the libraries need no Python, so it is a recommendation, not a dependency.
if(GGUFCHECK_PYTHON)
  math(EXPR ggufcheck_python_next "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${ggufcheck_python_next})")
endif()

# Said when cpack runs (CPackConfig.cmake includes this file): a build for /usr/local has
# CMAKE_INSTALL_LIBDIR lib, which the package would put in /usr/lib.
set(CPACK_GGUFCHECK_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_GGUFCHECK_INSTALL_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/ggufcheckCPackProjectConfig.cmake)
file(WRITE ${CPACK_PROJECT_CONFIG_FILE} [=[
if(NOT CPACK_GGUFCHECK_INSTALL_PREFIX STREQUAL "/usr")
  message(WARNING "This build installs into ${CPACK_GGUFCHECK_INSTALL_PREFIX}: its package puts "
          "the libraries in /usr/${CPACK_GGUFCHECK_INSTALL_LIBDIR}, not in Debian's multiarch "
          "directory. Build the package with scripts/package.sh (the package preset: "
          "CMAKE_INSTALL_PREFIX=/usr).")
endif()
]=])

include(CPack)
