# Shows that tests/layering.cmake fails when a rule is broken: for each rule, a temporary tree
# holding one file with a forbidden include must be refused with that file named, and the same
# tree without it must pass.   cmake -DLAYERING_SCRIPT=<layering.cmake> -DWORK_DIR=<dir> -P …
set(cases
    "base/bad.cpp|#include \"sealtrain/crypto/aead.h\""
    "base/bad.h|#include \"sealtrain/dataset/import.h\""
    "crypto/bad.cpp|#include \"sealtrain/audit/entry.h\""
    "crypto/bad.cpp|#include <sealtrain/dataset/reader.h>"
    "audit/bad.cpp|#include \"sealtrain/dataset/manifest.h\""
    "audit/bad.cpp|#include \"sealtrain/core/store/database.h\""
    "dataset/bad.cpp|#include \"sealtrain/trainer/gpt.h\""
    "dataset/bad.cpp|#include \"sealtrain/audit/entry.h\""
    "dataset/bad.cpp|#include <QString>"
    "trainer/bad.cu|#include \"sealtrain/core/store/database.h\""
    "formats/bad.cpp|#include \"sealtrain/trainer/gpt.h\""
    "formats/include/sealtrain/formats/bad.h|#include <QString>"
    "api/bad.cpp|#include \"sealtrain/formats/checkpoint.h\""
    "trainer/bad.cpp|  #  include <QtCore/QObject>"
    "core/bad.cpp|#include <QWidget>"
    "core/bad.cpp|#include \"sealtrain/api/client.h\""
    "api/bad.cpp|#include <QtWidgets/QDialog>"
    "api/bad.cpp|#include \"sealtrain/formats/checkpoint.h\""
    "api/bad.h|#include <sealtrain/dataset/manifest.h>"
    "worker/bad.cpp|#include <QtCore/QString>"
    "worker/bad.cpp|#include \"sealtrain/api/server.h\""
    "worker/bad.cpp|#include \"sealtrain/core/workers/workers.h\""
    "worker/include/sealtrain/worker/bad.h|#include <sealtrain/trainer/gpt.h>"
    "node/bad.cpp|#include \"sealtrain/core/store/database.h\""
    "node/include/sealtrain/node/bad.h|#include <QString>"
    "core/bad.cpp|#include \"sealtrain/worker/worker.h\""
    "app/gui/bad.cpp|#include \"sealtrain/core/store/database.h\""
    "app/gui/jobs/bad.h|#include <sealtrain/trainer/gpt.h>"
    "app/gui/bad.cpp|#include \"sealtrain/api/server.h\""
    "app/ctl/bad.cpp|#include \"sealtrain/core/backup/backup.h\""
    "app/ctl/bad.h|#include <sealtrain/trainer/platform_info.h>"
    "app/ctl/bad.cpp|#include \"sealtrain/api/server.h\""
    "core/datasets/bad.cpp|#include \"sealtrain/core/jobs/jobs.h\""
    "core/store/bad.h|#include \"identity/accounts.h\""
    "core/include/sealtrain/core/jobs/bad.h|#include <sealtrain/core/registry/registry.h>"
    "core/jobs/runs/bad.cpp|#include \"sealtrain/core/control_plane.h\""
    "core/control_plane.cpp|#include \"sealtrain/core/data_directory/data_directory.h\""
    "core/include/sealtrain/core/control_plane.h|#include <sealtrain/core/backup/backup.h>"
    "core/newconcept/bad.cpp|#include \"sealtrain/core/store/database.h\"")

set(tree "${WORK_DIR}/layering-selftest")
foreach(case IN LISTS cases)
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 file)
    list(GET parts 1 line)
    file(REMOVE_RECURSE "${tree}")
    file(WRITE "${tree}/base/fine.cpp" "#include \"sealtrain/base/result.h\"\n")
    execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${tree} -P ${LAYERING_SCRIPT}
        RESULT_VARIABLE clean_result OUTPUT_QUIET ERROR_QUIET)
    if(NOT clean_result EQUAL 0)
        message(FATAL_ERROR "The layering check refused a tree that breaks no rule.")
    endif()
    file(WRITE "${tree}/${file}" "// a deliberately wrong include\n${line}\n")
    execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${tree} -P ${LAYERING_SCRIPT}
        RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(FIND "${err}" "${file}" named)
    if(result EQUAL 0 OR named EQUAL -1)
        message(FATAL_ERROR "The layering check let through ${file}: ${line}")
    endif()
    message(STATUS "caught ${file}: ${line}")
endforeach()
file(REMOVE_RECURSE "${tree}")
foreach(n RANGE 1 11)
    file(WRITE "${tree}/core/jobs/part${n}.cpp" "// one of eleven\n")
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${tree} -P ${LAYERING_SCRIPT}
    RESULT_VARIABLE result ERROR_VARIABLE err)
string(FIND "${err}" "core/jobs/: 11 files" named)
if(result EQUAL 0 OR named EQUAL -1)
    message(FATAL_ERROR "The layering check let a folder of core/ hold 11 files.")
endif()
message(STATUS "caught a folder of core/ with 11 files")
file(REMOVE_RECURSE "${tree}")
message(STATUS "Every broken rule was caught")
