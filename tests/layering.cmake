# Checks the dependency rule of docs/architecture.md on what the sources include (the configure
# step checks what the targets link): base/, crypto/, audit/, dataset/ and trainer/ include no Qt
# header; core/ and api/ no Widgets or GUI header; no layer includes a header of a layer above it;
# api/ includes no dataset/ or trainer/ header; worker/ (the worker agent) uses no Qt and no part
# of the server.
#   cmake -DSOURCE_DIR=<tree> -P layering.cmake
# tests/layering_selftest.cmake breaks each rule in a temporary tree and checks that it is caught.
set(failures "")
function(check_folder folder pattern why)
    file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cpp"
                            "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" hits REGEX "${pattern}")
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
foreach(folder base crypto audit dataset trainer worker)
    check_folder(${folder} "${qt_include}" "${folder}/ uses no Qt")
endforeach()
foreach(folder core api)
    check_folder(${folder} "${gui_include}" "${folder}/ uses no Qt Widgets or GUI")
endforeach()
check_folder(base "${include_prefix}sealtrain/(crypto|audit|dataset|trainer|core|api|worker)/"
    "base/ is the bottom layer")
check_folder(crypto "${include_prefix}sealtrain/(audit|dataset|trainer|core|api|worker)/"
    "crypto/ is below audit, dataset, trainer and core")
check_folder(audit "${include_prefix}sealtrain/(dataset|trainer|core|api|worker)/"
    "audit/ is below core and beside dataset and trainer")
check_folder(dataset "${include_prefix}sealtrain/(audit|trainer|core|api|worker)/"
    "dataset/ is used by core and trainer and uses only crypto and base")
check_folder(trainer "${include_prefix}sealtrain/(audit|core|api|worker)/"
    "trainer/ knows nothing of the control plane")
check_folder(core "${include_prefix}sealtrain/(api|ctl|worker)/" "core/ is below api/ and app/")
check_folder(api "${include_prefix}sealtrain/(dataset|trainer|worker)/"
    "api/ adapts core/ to the contract; the rules and formats are core's (issue #28)")
check_folder(worker "${include_prefix}sealtrain/api/server"
    "worker/ is a client of the control plane, never its server")
check_folder(app/gui "${include_prefix}sealtrain/(core|dataset|trainer|worker)/"
    "app/gui is a client: it never opens the database or a platform key (issue #29)")
check_folder(app/gui "${include_prefix}sealtrain/api/server"
    "app/gui is a client of the control plane, never its server")

if(failures)
    message(FATAL_ERROR "Layering rule broken (docs/architecture.md):${failures}")
endif()
message(STATUS "Layering rule holds")
