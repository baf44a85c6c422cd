# Checks ARCHITECTURE.md's dependency rule on what the sources include (the configure step checks
# what the targets link): crypto/, audit/, trainer/ and base/ include no Qt header; core/ no
# Widgets or GUI header; lower layers include no header of a higher one.
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

set(qt_include "^[ \t]*#[ \t]*include[ \t]*[<\"](Q[A-Za-z]|Qt[A-Za-z]*/)")
set(gui_include "^[ \t]*#[ \t]*include[ \t]*[<\"](QtWidgets|QtGui|QWidget|QMainWindow|QApplication|QDialog)")
foreach(folder base crypto audit trainer)
    check_folder(${folder} "${qt_include}" "${folder}/ uses no Qt")
endforeach()
check_folder(core "${gui_include}" "core/ uses no Qt Widgets or GUI")
foreach(folder base crypto)
    check_folder(${folder} "#[ \t]*include[ \t]*[<\"]sealtrain/(audit|trainer|core)/" "${folder}/ is below audit, trainer and core")
endforeach()
check_folder(audit "#[ \t]*include[ \t]*[<\"]sealtrain/(trainer|core)/" "audit/ is below core and beside trainer")
check_folder(trainer "#[ \t]*include[ \t]*[<\"]sealtrain/(audit|core)/" "trainer/ knows nothing of the control plane")

if(failures)
    message(FATAL_ERROR "Layering rule broken (ARCHITECTURE.md):${failures}")
endif()
message(STATUS "Layering rule holds")
