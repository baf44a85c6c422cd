// Theme icons (icons.h).
#include "icons.h"

#include "common/colors.h"

#include <QApplication>
#include <QDir>
#include <QStandardPaths>

namespace sealtrain::gui {
namespace {

bool themeInstalled(const QString& name)
{
    for (const QString& base : QIcon::themeSearchPaths())
        if (QDir(base + "/" + name).exists("index.theme"))
            return true;
    return false;
}

}  // namespace

void ensureIconTheme()
{
    static const bool chosen = [] {
        // Some platforms (offscreen, minimal, a bare X session) search only Qt's resources: add
        // the XDG data folders' icons (/usr/share/icons), where Debian installs the themes.
        QStringList paths = QIcon::themeSearchPaths();
        for (const QString& data :
             QStandardPaths::standardLocations(QStandardPaths::GenericDataLocation))
            if (!paths.contains(data + "/icons") && QDir(data + "/icons").exists())
                paths << data + "/icons";
        QIcon::setThemeSearchPaths(paths);
        // A dark palette wants light glyphs: Breeze's dark variant where Breeze (or nothing)
        // was chosen, and the reverse for a light palette.
        const bool dark = paletteIsDark(QApplication::palette());
        QString current = QIcon::themeName();
        if (current == (dark ? "breeze" : "breeze-dark"))
            current = dark ? "breeze-dark" : "breeze";
        if (!current.isEmpty() && current != "hicolor" && themeInstalled(current)) {
            QIcon::setThemeName(current);
            return true;
        }
        for (const char* name : {dark ? "breeze-dark" : "breeze", "Adwaita"})
            if (themeInstalled(name)) {
                QIcon::setThemeName(name);
                return true;
            }
        return false;
    }();
    (void)chosen;
}

QIcon themeIcon(const QStringList& names)
{
    ensureIconTheme();
    for (const QString& name : names)
        if (QIcon::hasThemeIcon(name))
            return QIcon::fromTheme(name);
    return {};
}

}  // namespace sealtrain::gui
