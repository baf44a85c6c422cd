# A test's own code is compiled with -O1 in the optimised builds: code generation was three
# quarters of a test's compile time at -O2 and a quarter less at -O1 (measured on 2026-12-06),
# and what a test spends its time in (the libraries, the daemon) keeps the build's -O2. The flag
# comes after CMAKE_CXX_FLAGS_<CONFIG> on the command line, so it wins.
set(sealtrain_test_optimisation $<$<CONFIG:RelWithDebInfo,Release>:-O1>)

# The headers nearly every test includes, parsed once per folder of tests rather than once per
# test (docs/development.md, "Continuous integration"). A test still includes what it uses. Qt
# Test defines the folder's paths (QT_TESTCASE_BUILDDIR), so each folder has its own header.
function(sealtrain_test_pch_for_folder out)
    file(RELATIVE_PATH folder ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR})
    string(MAKE_C_IDENTIFIER "sealtrain_test_pch_${folder}" target)
    if(NOT TARGET ${target})
        add_library(${target} OBJECT ${PROJECT_SOURCE_DIR}/cmake/test_pch.cpp)
        target_link_libraries(${target} PRIVATE Qt6::Test fmt::fmt nlohmann_json::nlohmann_json
            sealtrain_compile_options)
        target_compile_options(${target} PRIVATE -pthread ${sealtrain_test_optimisation})
        target_precompile_headers(${target} PRIVATE
            <QtTest/QtTest> <fmt/format.h> <nlohmann/json.hpp>
            <filesystem> <fstream> <map> <string> <vector>)
    endif()
    set(${out} ${target} PARENT_SCOPE)
endfunction()

# add_sealtrain_test(NAME SOURCES src... [LIBS lib...] [LABELS label...] [TIMEOUT s] [NO_PCH])
# One Qt Test executable per unit, registered with CTest under its own name.
# Labels: every test gets "unit" unless it names others (gui, cuda, mpi, integration, slow).
# NO_PCH: a test whose Qt modules (Widgets, Charts) define macros the shared precompiled header
# was not made with (the GUI's tests).
function(add_sealtrain_test name)
    cmake_parse_arguments(ARG "NO_PCH" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    if(NOT ARG_SOURCES)
        message(FATAL_ERROR "add_sealtrain_test(${name}) needs SOURCES")
    endif()
    if(NOT ARG_LABELS)
        set(ARG_LABELS unit)
    endif()
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 300)
    endif()
    add_executable(${name} ${ARG_SOURCES})
    # fmt and -pthread (which gRPC's users get) for every test: the precompiled header was made
    # with their macros (FMT_SHARED, _REENTRANT), and GCC uses it only where they are the same.
    target_link_libraries(${name} PRIVATE Qt6::Test fmt::fmt sealtrain_test_support
        sealtrain_compile_options ${ARG_LIBS})
    target_compile_options(${name} PRIVATE -pthread ${sealtrain_test_optimisation})
    if(NOT ARG_NO_PCH)
        sealtrain_test_pch_for_folder(pch)
        target_precompile_headers(${name} REUSE_FROM ${pch})
    endif()
    set_target_properties(${name} PROPERTIES AUTOMOC ON)
    # A test includes its own .moc, so AUTOMOC's mocs_compilation.cpp is empty: loading the
    # precompiled header for it cost a second or more per test, a tenth of the sanitizer build.
    set_source_files_properties(
        ${CMAKE_CURRENT_BINARY_DIR}/${name}_autogen/mocs_compilation.cpp
        TARGET_DIRECTORY ${name} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    # The sanitizer build runs no GUI or heavy test (CMakePresets.json's asan test preset), so CI
    # does not spend its time compiling them there; `ninja NAME` still builds one.
    if(SEALTRAIN_SANITIZE AND ("gui" IN_LIST ARG_LABELS OR "heavy" IN_LIST ARG_LABELS))
        set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
    endif()
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES
        LABELS "${ARG_LABELS}"
        TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
    # QSKIP prints "SKIP   : Test::function() why" and the executable still exits 0, so CTest
    # would count a skipped check as passed: the output decides instead.
    if(SEALTRAIN_SKIPS_FAIL)
        set_tests_properties(${name} PROPERTIES FAIL_REGULAR_EXPRESSION "SKIP   : ")
    else()
        set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP   : ")
    endif()
endfunction()

# sealtrain_test_skips_with_77(TEST): a test that is not a Qt Test executable and exits 77 when a
# prerequisite is missing: skipped in CTest, failed where skips fail (CI). GPU tests use
# SKIP_RETURN_CODE 77 directly: they may skip anywhere.
function(sealtrain_test_skips_with_77 test)
    if(NOT SEALTRAIN_SKIPS_FAIL)
        set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
endfunction()
