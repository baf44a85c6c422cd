# Unity builds of Sealtrain's libraries (docs/development.md, "What keeps CI short"): CMake
# compiles each library's sources in batches of eight, each batch one translation unit. Most of a
# file's compile time here is code generation for the inline functions of the headers it shares
# with its neighbours (CLI11, gRPC's generated messages, fmt, nlohmann/json): measured on
# 2026-12-06, five of sealtrainctl's command files took 76 s one by one and 26 s as one unit.
# Each file still compiles alone (clang-tidy checks it so, and SEALTRAIN_UNITY=OFF builds so), and
# names private to a file live in its own anonymous namespace with names no neighbour uses.
option(SEALTRAIN_UNITY "Compile each Sealtrain library in batches of eight sources (unity build)" ON)

# sealtrain_unity(TARGET...): the targets whose C++ sources are batched.
function(sealtrain_unity)
    if(NOT SEALTRAIN_UNITY)
        return()
    endif()
    foreach(target ${ARGN})
        if(TARGET ${target})
            set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
            # GCC warns when a class uses a type from an anonymous namespace of a file other than
            # the one it compiles: in a batch, every file is such a file, so the warning (meant
            # for headers) would flag each pimpl whose State holds a file's private types.
            target_compile_options(${target} PRIVATE
                $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-subobject-linkage>)
        endif()
    endforeach()
endfunction()
