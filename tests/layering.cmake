# Checks the dependency rule of docs/architecture.md on what the sources include (the configure
# step checks what the targets link): base/, crypto/, audit/, dataset/ and trainer/ include no Qt
# header; core/ and api/ no Widgets or GUI header; no layer includes a header of a layer above it;
# api/ includes no dataset/ or trainer/ header; node/ only base and crypto; worker/ (the worker
# agent) uses no Qt, no part of the server and none of core/, the trainer or dataset/.
#   cmake -DSOURCE_DIR=<tree> -P layering.cmake
# tests/layering_selftest.cmake breaks each rule in a temporary tree and checks that it is caught.
set(failures "")
# check_folder(FOLDER PATTERN WHY [ALLOWED]): no line of FOLDER's sources matches PATTERN, except
# those that also match ALLOWED (one named exception to a rule, with its reason beside the call).
function(check_folder folder pattern why)
    file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cpp"
                            "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" hits REGEX "${pattern}")
        if(hits AND ARGC GREATER 3)
            list(FILTER hits EXCLUDE REGEX "${ARGV3}")
        endif()
        if(hits)
            file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
            list(GET hits 0 first)
            set(failures "${failures}\n  ${rel}: ${first}  (${why})" PARENT_SCOPE)
        endif()
    endforeach()
endfunction()

set(include_prefix "^[ \t]*#[ \t]*include[ \t]*[<\"]")
set(qt_include "${include_prefix}(Q[A-Za-z]|Qt[A-Za-z]*/)")
set(gui_include "${include_prefix}(QtWidgets|QtGui|QWidget|QMainWindow|QApplication|QDialog)")
foreach(folder base crypto audit dataset formats node trainer worker)
    check_folder(${folder} "${qt_include}" "${folder}/ uses no Qt")
endforeach()
foreach(folder core api)
    check_folder(${folder} "${gui_include}" "${folder}/ uses no Qt Widgets or GUI")
endforeach()
check_folder(base "${include_prefix}sealtrain/(crypto|audit|dataset|formats|trainer|core|api|worker)/"
    "base/ is the bottom layer")
check_folder(crypto "${include_prefix}sealtrain/(audit|dataset|formats|trainer|core|api|worker)/"
    "crypto/ is below audit, dataset, trainer and core")
check_folder(audit "${include_prefix}sealtrain/(dataset|formats|trainer|core|api|worker)/"
    "audit/ is below core and beside dataset and trainer")
check_folder(dataset "${include_prefix}sealtrain/(audit|formats|trainer|core|api|worker)/"
    "dataset/ is used by core and trainer and uses only crypto and base")
check_folder(formats "${include_prefix}sealtrain/(audit|trainer|core|api|worker)/"
    "formats/ holds the files the control plane and the trainer share, none of the model's code")
check_folder(trainer "${include_prefix}sealtrain/(audit|core|api|worker)/"
    "trainer/ knows nothing of the control plane")
check_folder(core "${include_prefix}sealtrain/(api|ctl|worker)/" "core/ is below api/ and app/")
# The one format api/ reads is the job spec: a caller's spec is parsed on the call's own thread,
# within the daemon's limits, before the call joins the group commit (api/jobs_service.cpp).
check_folder(api "${include_prefix}sealtrain/(dataset|formats|trainer|worker)/"
    "api/ adapts core/ to the contract; the rules and formats are core's (issue #28)"
    "sealtrain/formats/job_spec[.]h")
check_folder(node "${include_prefix}sealtrain/(audit|dataset|formats|trainer|core|api|worker)/"
    "node/ is what runs on a GPU node below the worker: base and crypto only")
check_folder(worker "${include_prefix}sealtrain/(core|trainer|dataset|audit)/"
    "worker/ is a client: the client library, node/ and the formats, never core/ or the model")
check_folder(worker "${include_prefix}sealtrain/api/server"
    "worker/ is a client of the control plane, never its server")
check_folder(app/ctl "${include_prefix}sealtrain/(core|trainer|worker)/"
    "app/ctl is a client: sealtrain-control's tools create, restore and check a data directory (issue #50)")
check_folder(app/ctl "${include_prefix}sealtrain/api/server"
    "app/ctl is a client of the control plane, never its server")
check_folder(app/gui "${include_prefix}sealtrain/(core|dataset|trainer|worker)/"
    "app/gui is a client: it never opens the database or a platform key (issue #29)")
check_folder(app/gui "${include_prefix}sealtrain/api/server"
    "app/gui is a client of the control plane, never its server")

# core/ by concept (issue #50; docs/architecture.md, "core/ by concept"): a file of a concept
# folder (core/CONCEPT/… or core/include/sealtrain/core/CONCEPT/…) includes only its own concept
# and those below it in this order. control_plane (core/control_plane.cpp and its header, at
# core/'s top) has its place in the order as a concept has: it holds the concepts below it, and
# the data directory above it opens it. control_plane_options.h, the plain struct of policy knobs,
# is for everyone. A folder that is not in the order is refused: a new concept takes its place in
# the design first.
set(core_concepts store access identity datasets workers jobs keys registry audit compliance
    platform control_plane data_directory dispatch backup)
file(GLOB_RECURSE core_files "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp")
foreach(file IN LISTS core_files)
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
    string(REGEX REPLACE "^core/(include/sealtrain/core/)?" "" inner "${rel}")
    if(inner MATCHES "^control_plane\\.(h|cpp)$")
        set(concept control_plane)
    elseif(inner MATCHES "^([^/]+)/")
        set(concept "${CMAKE_MATCH_1}")
    else()
        continue()  # control_plane_options.h: plain knobs, for everyone
    endif()
    if(concept STREQUAL "include")
        continue()
    endif()
    list(FIND core_concepts "${concept}" own)
    if(own EQUAL -1)
        set(failures "${failures}\n  ${rel}: core/${concept}/ is not a concept of the design (tests/layering.cmake's order)")
        continue()
    endif()
    file(STRINGS "${file}" lines REGEX "${include_prefix}")
    foreach(line IN LISTS lines)
        if(NOT line MATCHES "[<\"]([^>\"]+)[>\"]")
            continue()
        endif()
        set(path "${CMAKE_MATCH_1}")
        string(REGEX REPLACE "^sealtrain/core/" "" name "${path}")
        if(path MATCHES "^sealtrain/" AND name STREQUAL path)
            continue()  # another library's header
        endif()
        if(name STREQUAL "control_plane.h")
            list(FIND core_concepts control_plane rank)
        elseif(name MATCHES "^([^/]+)/")
            list(FIND core_concepts "${CMAKE_MATCH_1}" rank)
        else()
            continue()
        endif()
        if(rank GREATER own)
            set(failures "${failures}\n  ${rel}: ${line}  (core/${concept}/ is below what it includes)")
        endif()
    endforeach()
endforeach()
# A concept folder past ~8 files gets sub-concepts (docs/development.md): more than 10 sources
# and headers directly in one folder of core/ is refused.
file(GLOB_RECURSE core_dirs LIST_DIRECTORIES true "${SOURCE_DIR}/core/*")
foreach(dir IN LISTS core_dirs)
    if(IS_DIRECTORY "${dir}")
        file(GLOB direct "${dir}/*.cpp" "${dir}/*.h")
        list(LENGTH direct count)
        if(count GREATER 10)
            file(RELATIVE_PATH rel "${SOURCE_DIR}" "${dir}")
            set(failures "${failures}\n  ${rel}/: ${count} files in one folder; give it sub-concepts")
        endif()
    endif()
endforeach()

if(failures)
    message(FATAL_ERROR "Layering rule broken (docs/architecture.md):${failures}")
endif()
message(STATUS "Layering rule holds")
