// A translation can be added to the desktop (issue #51, item 1; docs/gui.md, "Translations"):
// the build's template (lupdate over app/gui) holds the words of every screen under the context
// each is looked up with at run time; a translator's file made from it, compiled by lrelease
// and installed with QTranslator, changes the words the real widgets show: the palette's title,
// a menu of the window, a table model's column (a class whose tr() lupdate could not place
// would keep its English words here).
#include "access/access_models.h"
#include "main_window.h"
#include "session/session.h"
#include "shell/command_palette.h"

#include <QDir>
#include <QFile>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest/QtTest>

using namespace sealtrain;

namespace {

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// `ts` with the unfinished translation of `source` in `context` filled with `words`.
QString translated(QString ts, const QString& context, const QString& source, const QString& words)
{
    const qsizetype at = ts.indexOf("<name>" + context + "</name>");
    if (at < 0)
        return {};
    const QRegularExpression message(
        "(<source>" + QRegularExpression::escape(source)
        + "</source>\\s*)<translation type=\"unfinished\"></translation>");
    const auto match = message.match(ts, at);
    if (!match.hasMatch())
        return {};
    ts.replace(match.capturedStart(), match.capturedLength(),
               match.captured(1) + "<translation>" + words + "</translation>");
    return ts;
}

}  // namespace

class TestGuiTranslation : public QObject {
    Q_OBJECT

private slots:
    void templateHoldsEveryScreensWords()
    {
        const QString ts = readAll(SEALTRAIN_TS_TEMPLATE);
        QVERIFY2(!ts.isEmpty(), "the build made no translation template");
        QVERIFY(ts.contains("<TS version="));
        const auto messages = ts.count("<message>");
        QVERIFY2(messages >= 500, qPrintable(QString::number(messages)));
        for (const char* context :
             {"sealtrain::gui::MainWindow", "sealtrain::gui::CommandPalette",
              "sealtrain::gui::SignInPage", "sealtrain::gui::DatasetsPage",
              "sealtrain::gui::JobsPage", "sealtrain::gui::RunsPage", "sealtrain::gui::ModelsPage",
              "sealtrain::gui::WorkersPage", "sealtrain::gui::AuditPage",
              "sealtrain::gui::UsersTab", "sealtrain::gui::UserTableModel", "HeadCheck"})
            QVERIFY2(ts.contains(QStringLiteral("<name>%1</name>").arg(context)), context);
    }

    void aTranslationChangesTheWidgetsWords()
    {
        QString ts = readAll(SEALTRAIN_TS_TEMPLATE);
        for (const auto& [context, source, words] :
             std::initializer_list<std::tuple<QString, QString, QString>>{
                 {"sealtrain::gui::CommandPalette", "Command palette", "Befehlspalette"},
                 {"sealtrain::gui::MainWindow", "&amp;Go", "&amp;Gehe zu"},
                 {"sealtrain::gui::UserTableModel", "Roles", "Rollen"}}) {
            ts = translated(ts, context, source, words);
            QVERIFY2(!ts.isEmpty(), qPrintable(context + ": " + source));
        }
        ts.replace("<TS version=\"2.1\">", "<TS version=\"2.1\" language=\"de_DE\">");
        QTemporaryDir dir;
        const QString source = dir.filePath("sealtrain_de.ts");
        const QString compiled = dir.filePath("sealtrain_de.qm");
        QFile out(source);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(ts.toUtf8());
        out.close();
        QProcess lrelease;
        lrelease.start(SEALTRAIN_LRELEASE, {"-silent", source, "-qm", compiled});
        QVERIFY(lrelease.waitForFinished(60000));
        QCOMPARE(lrelease.exitCode(), 0);

        QTranslator german;
        QVERIFY(
            german.load(QLocale(QLocale::German, QLocale::Germany), "sealtrain", "_", dir.path()));
        QVERIFY(QCoreApplication::installTranslator(&german));
        gui::CommandPalette palette({});
        QCOMPARE(palette.windowTitle(), QString("Befehlspalette"));
        gui::Session session(std::filesystem::path(dir.filePath("profile").toStdString()), {});
        gui::MainWindow window(session, {});
        QStringList menus;
        for (QAction* action : window.menuBar()->actions())
            menus << action->text();
        QVERIFY2(menus.contains("&Gehe zu"), qPrintable(menus.join(", ")));
        const gui::UserTableModel users;
        QCOMPARE(users.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QString("Rollen"));
        QCoreApplication::removeTranslator(&german);
        QCOMPARE(gui::CommandPalette({}).windowTitle(), QString("Command palette"));
    }
};

QTEST_MAIN(TestGuiTranslation)
#include "test_gui_translation.moc"
