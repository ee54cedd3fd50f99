# cmake -DPOM=<pom.xml> -DVERSION=<project version> -DSOURCE=<bindings/java>
#       -DBUILD=<CMake build folder> -P check_pom.cmake
# pom.xml is written by hand beside a CMake build that Maven does not run
# here; this keeps it from drifting: its coordinates and version are the
# project's, the folders it names hold the sources, and what it reads from
# a CMake build (comm.build/...) is where this build puts it.
file(READ "${POM}" pom)
set(problems "")
foreach(element groupId artifactId version sourceDirectory testSourceDirectory)
  string(REGEX MATCH "<${element}>([^<]*)</${element}>" _ "${pom}")
  set(${element} "${CMAKE_MATCH_1}")
endforeach()
if(NOT groupId STREQUAL "org.libcomm" OR NOT artifactId STREQUAL "comm")
  list(APPEND problems "coordinates are ${groupId}:${artifactId}, not org.libcomm:comm")
endif()
if(NOT version STREQUAL VERSION)
  list(APPEND problems "version is '${version}' but the project's (project(VERSION) in CMakeLists.txt) is ${VERSION}")
endif()
foreach(folder IN ITEMS ${sourceDirectory} ${testSourceDirectory})
  file(GLOB java "${SOURCE}/${folder}/org/libcomm/*.java")
  if(NOT java)
    list(APPEND problems "${folder} holds no org/libcomm/*.java")
  endif()
endforeach()
string(REGEX MATCHALL "\\\${comm\\.build}/[^<]*" from_build "${pom}")
foreach(path IN LISTS from_build)
  string(REPLACE "\${comm.build}" "${BUILD}" path "${path}")
  if(NOT EXISTS "${path}")
    list(APPEND problems "it reads ${path}, which the CMake build does not make")
  endif()
endforeach()
if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "bindings/java/pom.xml:\n  ${problems}")
endif()
list(LENGTH from_build paths)
message(STATUS "pom.xml: org.libcomm:comm:${version}, sources in ${sourceDirectory} and ${testSourceDirectory}, "
               "${paths} paths of the CMake build, all there")
