# Compiler settings every Sealtrain target shares (docs/development.md, "Conventions every layer reuses"): warnings, hardening, sanitizers.
add_library(sealtrain_compile_options INTERFACE)

target_compile_options(sealtrain_compile_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
        -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
        -Wimplicit-fallthrough -Wformat=2>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${SEALTRAIN_WERROR}>>:-Werror>)

# Hardening (KeePassXC's set): stack protector, fortified libc calls, PIE, full RELRO.
target_compile_options(sealtrain_compile_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX,C>:-fstack-protector-strong -fstack-clash-protection>)
if(NOT SEALTRAIN_SANITIZE)
    # _FORTIFY_SOURCE needs optimisation and conflicts with ASan's interceptors.
    target_compile_definitions(sealtrain_compile_options INTERFACE
        $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<NOT:$<CONFIG:Debug>>>:_FORTIFY_SOURCE=2>)
endif()
target_link_options(sealtrain_compile_options INTERFACE -Wl,-z,relro,-z,now -Wl,-z,noexecstack)
include(CheckPIESupported)
check_pie_supported()

# lld, where it is installed (scripts/setup installs it), links several times faster than GNU ld:
# linking the test executables was a sixth of the sanitizer build's time (docs/development.md,
# "What keeps CI short").
include(CheckLinkerFlag)
check_linker_flag(CXX -fuse-ld=lld SEALTRAIN_HAVE_LLD)
if(SEALTRAIN_HAVE_LLD)
    target_link_options(sealtrain_compile_options INTERFACE -fuse-ld=lld)
endif()

if(SEALTRAIN_SANITIZE)
    target_compile_options(sealtrain_compile_options INTERFACE
        $<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=address,undefined -fno-sanitize-recover=all
            -fno-omit-frame-pointer>)
    target_link_options(sealtrain_compile_options INTERFACE -fsanitize=address,undefined)
endif()
