# HspcGen.cmake: hspc-gen's per-machine install step for a CMake project. It ships with hspc-gen;
# `hspc-gen integration --cmake` prints where. In your CMakeLists.txt (CMake 3.19 or later):
#
#   find_program(HSPC_GEN_EXECUTABLE hspc-gen REQUIRED)
#   execute_process(COMMAND "${HSPC_GEN_EXECUTABLE}" integration --cmake
#                   OUTPUT_VARIABLE hspc_gen_module OUTPUT_STRIP_TRAILING_WHITESPACE
#                   COMMAND_ERROR_IS_FATAL ANY)
#   include("${hspc_gen_module}")
#   hspc_gen_channel(TARGET app.yaml LIBRARY app_channel)
#   target_link_libraries(app PRIVATE app_channel)
#
# hspc_gen_channel(TARGET <app.yaml> [OUTPUT <dir>] [LIBRARY <name>] [HEADER_VAR <variable>])
#   At configure time, runs `hspc-gen vendor`: the channel is tuned for this host and its header
#   written into OUTPUT (default: ${CMAKE_CURRENT_BINARY_DIR}/hspc), unless OUTPUT already holds
#   the header made from the same app.yaml and the files it names, the same hspc-gen, the same host
#   and the same effort: a re-configure then costs a second, not a tuning run. A change to app.yaml
#   or to a file it names re-configures the build. LIBRARY names an INTERFACE library to link: the
#   header's folder and the threads it needs (as Meson's hspc_channel_dep). HEADER_VAR receives
#   the header's path. A failed run fails the configure, with hspc-gen's message above CMake's.
#
# HSPC_GEN_EFFORT (cache variable) is the run's --effort. Set it to estimate where timings mean
# nothing, as on CI: -DHSPC_GEN_EFFORT=estimate. Left empty it is measure, or estimate in a cross
# build (CMAKE_CROSSCOMPILING), since the machine the program will run on is not here to be
# measured: that header is the build host's estimate, so run hspc-gen on the target machine for a
# tuned one (or set HSPC_GEN_EFFORT where the toolchain file targets this very machine).
# The run builds its measurements with the project's C++ compiler (CMAKE_CXX_COMPILER).

include_guard(GLOBAL)

set(HSPC_GEN_EFFORT "" CACHE STRING
    "hspc-gen --effort at configure time: estimate (no measuring), quick, measure, patient or exhaustive (empty: measure; estimate when cross-compiling)")
set_property(CACHE HSPC_GEN_EFFORT PROPERTY STRINGS "" estimate quick measure patient exhaustive)
find_program(HSPC_GEN_EXECUTABLE hspc-gen)

function(hspc_gen_channel)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;OUTPUT;LIBRARY;HEADER_VAR" "")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_TARGET)
    message(FATAL_ERROR "usage: hspc_gen_channel(TARGET <app.yaml> [OUTPUT <dir>] "
                        "[LIBRARY <name>] [HEADER_VAR <variable>]), not: ${ARGV}")
  endif()
  if(NOT HSPC_GEN_EXECUTABLE)
    message(FATAL_ERROR "hspc_gen_channel: hspc-gen is not on PATH (or set HSPC_GEN_EXECUTABLE)")
  endif()
  if(NOT arg_OUTPUT)
    set(arg_OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/hspc")
  endif()
  get_filename_component(target "${arg_TARGET}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(output "${arg_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(effort "${HSPC_GEN_EFFORT}")
  if(NOT effort)
    if(CMAKE_CROSSCOMPILING)
      set(effort estimate)
    else()
      set(effort measure)
    endif()
  endif()

  message(STATUS "hspc-gen: ${target} (--effort ${effort})")
  # stderr is left to the terminal: a measuring run shows its progress there while it takes its
  # budget, and a failing one its message.
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "CXX=${CMAKE_CXX_COMPILER}"
            "${HSPC_GEN_EXECUTABLE}" vendor --target "${target}" --out "${output}"
            --effort "${effort}"
    RESULT_VARIABLE exit_status
    OUTPUT_VARIABLE listing)
  if(NOT exit_status EQUAL 0)
    message(FATAL_ERROR "hspc-gen vendor failed (${exit_status}) for ${target}; "
                        "its message is above")
  endif()

  set(inputs "")
  string(REGEX MATCHALL "[^\n]+" lines "${listing}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^status (.+)$")
      set(state "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^header (.+)$")
      set(header "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^input (.+)$")
      list(APPEND inputs "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  # The tool itself too: reinstalling hspc-gen rewrites it, and a new version must tune again.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${inputs} "${HSPC_GEN_EXECUTABLE}")
  message(STATUS "hspc-gen: ${header} ${state}")
  if(arg_LIBRARY)
    find_package(Threads REQUIRED)
    add_library(${arg_LIBRARY} INTERFACE)
    target_include_directories(${arg_LIBRARY} INTERFACE "${output}")
    target_link_libraries(${arg_LIBRARY} INTERFACE Threads::Threads)
    target_compile_features(${arg_LIBRARY} INTERFACE cxx_std_17)
  endif()
  if(arg_HEADER_VAR)
    set(${arg_HEADER_VAR} "${header}" PARENT_SCOPE)
  endif()
endfunction()
