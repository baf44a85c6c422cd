# What an executable may load, read from the libraries it names itself (its dynamic section's
# NEEDED entries, what our link line put there): Debian's GCC links --as-needed, so this catches
# a program that uses a forbidden library's code however it came to link it; a link alone is the
# configure step's to refuse (sealtrain_forbid_links_transitive). What a system library loads for
# itself is not ours and not counted (Qt Core's BLAKE2 library brings libgomp into the sanitizer
# build).
#   sealtrain-control (issue #28): no MPI, BLAS or OpenMP; they are the trainer's, and the control
#   plane links only the formats it shares with it.
#     cmake -DCONTROL=<path to sealtrain-control> -P control_links.cmake
#   sealtrain-worker (issue #50, item 3): a client, so none of those, no SQLCipher and no Qt.
#   sealtrainctl (issue #50, item 3): a client, so none of those and no SQLCipher (Qt Gui: the PDF
#   reports).
#     cmake -DEXECUTABLE=<path> -DFORBIDDEN=<regex of library names> -DWHY=<sentence> -P …
if(DEFINED CONTROL)
    set(EXECUTABLE "${CONTROL}")
    set(FORBIDDEN "^lib(mpi|open-rte|open-pal|openblas|blas|cblas|gomp|omp|cudart|nccl|cublas)")
    set(WHY "sealtrain-control links the trainer's libraries")
    set(FIX "Link sealtrain_formats, not sealtrain_trainer (docs/architecture.md, 'Layers').")
endif()
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} --dynamic "${EXECUTABLE}" RESULT_VARIABLE result
                OUTPUT_VARIABLE dynamic ERROR_VARIABLE error)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "readelf could not read ${EXECUTABLE}: ${error}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]*\\]" needed "${dynamic}")
list(LENGTH needed count)
if(count EQUAL 0)
    message(FATAL_ERROR "${EXECUTABLE} names no shared library; is it the dynamic executable?")
endif()
set(broken "")
foreach(entry IN LISTS needed)
    string(REGEX REPLACE ".*\\[([^]]*)\\].*" "\\1" library "${entry}")
    if(library MATCHES "${FORBIDDEN}")
        string(APPEND broken "\n  ${library}")
    endif()
endforeach()
if(broken)
    message(FATAL_ERROR "${WHY}:${broken}\n${FIX}")
endif()
message(STATUS "${EXECUTABLE} names ${count} libraries, none matching ${FORBIDDEN}")
