# Enforces the dependency rule of docs/architecture.md on what library targets link, at configure time.
function(sealtrain_forbid_links target forbidden_prefixes)
    get_target_property(links ${target} LINK_LIBRARIES)
    get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS links interface_links)
        foreach(prefix IN LISTS forbidden_prefixes)
            string(FIND "${lib}" "${prefix}" position)
            if(position EQUAL 0)
                message(FATAL_ERROR "Layering rule broken: ${target} links ${lib}. "
                    "See docs/architecture.md, 'Layers'.")
            endif()
        endforeach()
    endforeach()
endfunction()
