# sealtrain-control, the daemon that holds every key, loads no MPI, BLAS or OpenMP library
# (issue #28): they are the trainer's, and the control plane links only the formats it shares
# with it. Reads what the dynamic loader would load (ldd): Debian's GCC links --as-needed, so this
# catches a daemon that uses the trainer's code, however it came to link it; a link alone is the
# configure step's to refuse (sealtrain_forbid_links_transitive).
#   cmake -DCONTROL=<path to sealtrain-control> -P control_links.cmake
execute_process(COMMAND ldd "${CONTROL}" RESULT_VARIABLE result OUTPUT_VARIABLE libraries
                ERROR_VARIABLE error)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "ldd could not read ${CONTROL}: ${error}")
endif()
set(broken "")
foreach(pattern libmpi libopen-rte libopen-pal libopenblas libblas libcblas libgomp libomp
        libcudart libnccl libcublas)
    string(REGEX MATCHALL "[^\n]*${pattern}[^\n]*" hits "${libraries}")
    foreach(hit IN LISTS hits)
        string(STRIP "${hit}" hit)
        string(APPEND broken "\n  ${hit}")
    endforeach()
endforeach()
if(broken)
    message(FATAL_ERROR "sealtrain-control loads the trainer's libraries:${broken}\n"
        "Link sealtrain_trainer_formats, not sealtrain_trainer (docs/architecture.md, 'Layers').")
endif()
string(REGEX MATCHALL "\n" lines "${libraries}")
list(LENGTH lines count)
message(STATUS "sealtrain-control loads ${count} libraries, none of MPI, BLAS, OpenMP or CUDA")
