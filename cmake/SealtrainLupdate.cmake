# Runs lupdate over the desktop's sources into the translation template (app/gui/CMakeLists.txt)
# and fails on what would leave a word untranslated at run time: a class whose tr() lupdate can
# not place (no Q_OBJECT: its strings would be looked up under its base class's name), or a
# tr() it could not read.
#   cmake -DLUPDATE=... -DSOURCES=DIR -DTEMPLATE=FILE -P SealtrainLupdate.cmake
execute_process(
    COMMAND ${LUPDATE} -no-obsolete -locations relative ${SOURCES} -ts ${TEMPLATE}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(said "${out}${err}")
if(NOT result EQUAL 0)
    message(FATAL_ERROR "lupdate failed (${result}):\n${said}")
endif()
string(REGEX MATCHALL "[^\n]*(lacks Q_OBJECT|Cannot invoke tr|unconsumed|Unbalanced)[^\n]*"
    problems "${said}")
if(problems)
    string(REPLACE ";" "\n" problems "${problems}")
    message(FATAL_ERROR "lupdate could not place these words for translation; give the class "
        "Q_OBJECT, or call QCoreApplication::translate with a context:\n${problems}")
endif()
