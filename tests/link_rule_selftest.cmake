# Shows that sealtrain_forbid_links_transitive (cmake/SealtrainLayering.cmake), which keeps MPI,
# BLAS and OpenMP out of sealtrain-control, catches a forbidden library however deep it is linked:
# configures a throw-away project whose "daemon" reaches MPI through three libraries, two of them
# private links of static libraries ($<LINK_ONLY:…>, as CMake records them), once with the rule
# broken (must fail, naming the path) and once without (must pass).
#   cmake -DLAYERING_MODULE=<SealtrainLayering.cmake> -DWORK_DIR=<dir> -P link_rule_selftest.cmake
set(tree "${WORK_DIR}/link-rule-selftest")
foreach(broken IN ITEMS ON OFF)
    file(REMOVE_RECURSE "${tree}")
    file(WRITE "${tree}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.25)
project(link_rule_selftest NONE)
include(\"${LAYERING_MODULE}\")
add_library(MPI::MPI_C INTERFACE IMPORTED)
add_library(model INTERFACE)
target_link_libraries(model INTERFACE \"\$<LINK_ONLY:MPI::MPI_C>\")
add_library(formats INTERFACE)
add_library(core INTERFACE)
target_link_libraries(core INTERFACE formats)
if(${broken})
    target_link_libraries(formats INTERFACE \"\$<LINK_ONLY:model>\")
endif()
add_library(daemon INTERFACE)
target_link_libraries(daemon INTERFACE core)
sealtrain_forbid_links_transitive(daemon \"MPI::\")
")
    execute_process(COMMAND ${CMAKE_COMMAND} -S "${tree}" -B "${tree}/build"
        RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(broken)
        string(REGEX REPLACE "[ \n]+" " " flat "${err}")
        string(FIND "${flat}" "daemon -> core -> formats -> model -> MPI::MPI_C" named)
        if(result EQUAL 0 OR named EQUAL -1)
            message(FATAL_ERROR "The link rule let a daemon link model code through core:\n${err}")
        endif()
        message(STATUS "caught: daemon -> core -> formats -> model -> MPI::MPI_C")
    elseif(NOT result EQUAL 0)
        message(FATAL_ERROR "The link rule refused a daemon that links no forbidden library:\n${err}")
    endif()
endforeach()
file(REMOVE_RECURSE "${tree}")
message(STATUS "The transitive link rule catches a forbidden library")
