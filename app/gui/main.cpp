// sealtrain: the desktop control plane (issue #29), a client of sealtrain-control like any other.
#include "common/background.h"
#include "common/resources.h"
#include "main_window.h"
#include "session/session.h"
#include "shell/theme.h"

#include "sealtrain/api/client.h"
#include "sealtrain/api/profile.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/process.h"
#include "sealtrain/base/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace {

// Another of our programs: named by `variable`, else beside this one (installed) or in the build
// tree; empty when neither.
std::filesystem::path sibling(const char* variable, std::string_view name, std::string_view folder)
{
    if (const char* named = std::getenv(variable); named != nullptr && *named != '\0')
        return named;
    return sealtrain::siblingExecutable(name, folder).value_or(std::filesystem::path());
}

}  // namespace

int main(int argc, char** argv)
{
    // The desktop handles the keyring passphrase and users' passwords: a crash must not copy them
    // to a core file, nor another process of this user read them with ptrace (issue #48).
    sealtrain::disableCoreDumps();
    const sealtrain::api::GrpcRuntime grpc;
    QApplication app(argc, argv);
    QApplication::setApplicationName("sealtrain");
    QApplication::setApplicationVersion(sealtrain::kVersion);
    sealtrain::gui::ensureResources();
    QApplication::setWindowIcon(QIcon(":/sealtrain/sealtrain.svg"));
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "The Sealtrain desktop: sign in to a control plane and do your role's work there.");
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption profile(
        "profile",
        "The client profile folder (default $SEALTRAIN_CLIENT_DIR, else "
        "~/.config/sealtrain/client), as sealtrainctl uses it.",
        "DIR");
    const QCommandLineOption lockAfter(
        "lock-after",
        "Lock the window after this many idle seconds (default 300, never longer "
        "than the session's own idle limit).",
        "SECONDS", "300");
    const QCommandLineOption theme(
        "theme",
        "light, dark, or system: follow the desktop's choice (the default, or $SEALTRAIN_THEME).",
        "THEME", qEnvironmentVariable("SEALTRAIN_THEME", "system"));
    parser.addOption(profile);
    parser.addOption(lockAfter);
    parser.addOption(theme);
    parser.process(app);
    const auto chosenTheme = sealtrain::gui::parseTheme(parser.value(theme));
    if (!chosenTheme) {
        std::fprintf(stderr, "sealtrain: --theme takes light, dark or system, not '%s'.\n",
                     qPrintable(parser.value(theme)));
        return 2;
    }
    sealtrain::gui::applyTheme(*chosenTheme);
    // The user's language, where a translation is installed (docs/gui.md, "Translations"): Qt's
    // own words (its dialogs' buttons), then ours from share/sealtrain/translations.
    QTranslator qtWords;
    if (qtWords.load(QLocale(), "qtbase", "_", QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(&qtWords);
    QTranslator ourWords;
    if (ourWords.load(QLocale(), "sealtrain", "_",
                      QApplication::applicationDirPath() + "/../share/sealtrain/translations"))
        QApplication::installTranslator(&ourWords);

    sealtrain::gui::Session session(parser.isSet(profile)
                                        ? std::filesystem::path(parser.value(profile).toStdString())
                                        : sealtrain::api::Profile::defaultFolder(),
                                    sibling("SEALTRAIN_CONTROL", "sealtrain-control", "control"));
    // sealtrainctl makes a workstation's data directory on the first run.
    session.setInitExecutable(sibling("SEALTRAIN_CTL", "sealtrainctl", "ctl"));
    sealtrain::gui::WindowOptions options;
    options.lockAfter = std::chrono::seconds(std::max(10, parser.value(lockAfter).toInt()));
    sealtrain::gui::MainWindow window(session, options);
    window.show();
    const int code = QApplication::exec();
    sealtrain::gui::callPool().waitForDone();
    return code;
}
