// Light and dark palettes (theme.h).
#include "theme.h"

#include "common/colors.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusVariant>
#include <QStyle>
#include <QStyleFactory>

namespace sealtrain::gui {

std::optional<ThemeChoice> parseTheme(const QString& text)
{
    const QString word = text.trimmed().toLower();
    if (word == QLatin1String("system"))
        return ThemeChoice::System;
    if (word == QLatin1String("light"))
        return ThemeChoice::Light;
    if (word == QLatin1String("dark"))
        return ThemeChoice::Dark;
    return std::nullopt;
}

bool desktopPrefersDark()
{
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (!bus.isConnected())
        return false;
    QDBusMessage read = QDBusMessage::createMethodCall(
        QStringLiteral("org.freedesktop.portal.Desktop"),
        QStringLiteral("/org/freedesktop/portal/desktop"),
        QStringLiteral("org.freedesktop.portal.Settings"), QStringLiteral("Read"));
    read << QStringLiteral("org.freedesktop.appearance") << QStringLiteral("color-scheme");
    constexpr int kPortalWaitMs = 500;  // a missing portal must not hold the window back
    const QDBusMessage reply = bus.call(read, QDBus::Block, kPortalWaitMs);
    if (reply.type() != QDBusMessage::ReplyMessage || reply.arguments().isEmpty())
        return false;
    // The value arrives as a variant, nested once more by some portals: 1 means prefer dark.
    QVariant value = reply.arguments().constFirst();
    while (value.canConvert<QDBusVariant>())
        value = value.value<QDBusVariant>().variant();
    return value.toUInt() == 1;
}

QPalette lightPalette()
{
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette palette = fusion->standardPalette();
    delete fusion;
    // Fusion's selection blue (#308cc6) gives white text 3.7:1; this one 6.5:1 (WCAG AA).
    palette.setColor(QPalette::Highlight, QColor("#1d5fa8"));
    return palette;
}

QPalette darkPalette()
{
    const QColor window("#2b2d30");
    const QColor base("#1e1f22");
    const QColor text("#e6e6e6");
    const QColor disabled("#7f8388");
    const QColor highlight("#2a5db0");
    QPalette palette;
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, QColor("#26282b"));
    palette.setColor(QPalette::ToolTipBase, QColor("#3c3f41"));
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::PlaceholderText, disabled);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, QColor("#393b40"));
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::BrightText, QColor("#ff8a80"));
    palette.setColor(QPalette::Light, QColor("#4e5157"));
    palette.setColor(QPalette::Midlight, QColor("#43454a"));
    palette.setColor(QPalette::Mid, QColor("#55585e"));
    palette.setColor(QPalette::Dark, QColor("#1a1b1e"));
    palette.setColor(QPalette::Shadow, QColor("#0d0d0f"));
    palette.setColor(QPalette::Highlight, highlight);
    palette.setColor(QPalette::HighlightedText, QColor("#ffffff"));
    palette.setColor(QPalette::Link, QColor("#6cb6ef"));
    palette.setColor(QPalette::LinkVisited, QColor("#b39ddb"));
    for (const QPalette::ColorRole role :
         {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        palette.setColor(QPalette::Disabled, role, disabled);
    palette.setColor(QPalette::Disabled, QPalette::Highlight, QColor("#4a4d52"));
    return palette;
}

bool applyTheme(ThemeChoice choice)
{
    if (choice == ThemeChoice::System) {
        if (paletteIsDark(QApplication::palette()))
            return true;  // the desktop's Qt theme draws dark already
        if (!desktopPrefersDark())
            return false;  // the desktop's own light look
        choice = ThemeChoice::Dark;
    }
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(choice == ThemeChoice::Dark ? darkPalette() : lightPalette());
    return choice == ThemeChoice::Dark;
}

}  // namespace sealtrain::gui
