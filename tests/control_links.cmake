# sealtrain-control, the daemon that holds every key, links no MPI, BLAS or OpenMP library
# (issue #28): they are the trainer's, and the control plane links only the formats it shares
# with it. Reads the libraries the executable itself names (its dynamic section's NEEDED entries,
# what our link line put there): Debian's GCC links --as-needed, so this catches a daemon that
# uses the trainer's code however it came to link it; a link alone is the configure step's to
# refuse (sealtrain_forbid_links_transitive). What a system library loads for itself is not
# ours and not counted (Qt Core's BLAKE2 library brings libgomp into the sanitizer build).
#   cmake -DCONTROL=<path to sealtrain-control> -P control_links.cmake
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} --dynamic "${CONTROL}" RESULT_VARIABLE result
                OUTPUT_VARIABLE dynamic ERROR_VARIABLE error)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "readelf could not read ${CONTROL}: ${error}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]*\\]" needed "${dynamic}")
list(LENGTH needed count)
if(count EQUAL 0)
    message(FATAL_ERROR "${CONTROL} names no shared library; is it the dynamic executable?")
endif()
set(broken "")
foreach(entry IN LISTS needed)
    string(REGEX REPLACE ".*\\[([^]]*)\\].*" "\\1" library "${entry}")
    if(library MATCHES "^lib(mpi|open-rte|open-pal|openblas|blas|cblas|gomp|omp|cudart|nccl|cublas)")
        string(APPEND broken "\n  ${library}")
    endif()
endforeach()
if(broken)
    message(FATAL_ERROR "sealtrain-control links the trainer's libraries:${broken}\n"
        "Link sealtrain_formats, not sealtrain_trainer (docs/architecture.md, 'Layers').")
endif()
message(STATUS "sealtrain-control names ${count} libraries, none of MPI, BLAS, OpenMP or CUDA")
