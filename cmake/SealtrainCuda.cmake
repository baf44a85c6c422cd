# CUDA is built whenever nvcc is found (SEALTRAIN_CUDA=AUTO), required with ON, skipped with OFF.
# Hopper (sm_90a) machine code plus compute_90 PTX, so newer GPUs can JIT it.
set(SEALTRAIN_CUDA_ENABLED OFF)
if(NOT SEALTRAIN_CUDA STREQUAL "OFF")
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
       AND EXISTS "/usr/local/cuda/bin/nvcc")
        set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
        if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
            set(CMAKE_CUDA_ARCHITECTURES "90a-real;90-virtual")
        endif()
        enable_language(CUDA)
        # CMake 3.25 does not know that nvcc 12+ speaks C++20: teach it the flag and feature.
        if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0
           AND NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
            set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
            set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
            list(APPEND CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
            list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
        endif()
        set(CMAKE_CUDA_STANDARD 20)
        set(CMAKE_CUDA_STANDARD_REQUIRED ON)
        find_package(CUDAToolkit REQUIRED)
        set(SEALTRAIN_CUDA_ENABLED ON)
    elseif(SEALTRAIN_CUDA STREQUAL "ON")
        message(FATAL_ERROR "SEALTRAIN_CUDA=ON but no CUDA compiler was found: install the CUDA "
                            "toolkit or set CUDACXX to nvcc's path.")
    endif()
endif()
