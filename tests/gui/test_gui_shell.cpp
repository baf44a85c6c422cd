// The desktop's shell (issue #51, item 1): the menu bar, toolbar and status bar, the command
// palette (Ctrl+K) as each role sees it, and the keyboard and screen-reader gates: Tab reaches
// every control of every screen, tab and dialog and leaves each again (no keyboard trap), every
// control has a name a screen reader reads, and a secret field is never read out. Driven by
// objectName against a real sealtrain-control.
#include "gui_site.h"
#include "keyboard_gate.h"

#include "main_window.h"
#include "session/session.h"
#include "shell/command_palette.h"

#include <QAction>
#include <QDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QtTest/QtTest>

using namespace sealtrain;

namespace {

// The screen in front.
QString currentScreen(const testing::Desk& desk)
{
    return desk.find<QWidget>("workspace")
        ->findChild<QStackedWidget*>(QString(), Qt::FindDirectChildrenOnly)
        ->currentWidget()
        ->objectName();
}

// Opens the palette with Ctrl+K, types `query` and presses Enter; fails unless `expected` is the
// first entry listed.
void runFromPalette(testing::Desk& desk, const QString& query, const QString& expected)
{
    QApplication::setActiveWindow(desk.window.get());  // shortcuts reach the active window only
    QTRY_VERIFY(desk.window->isActiveWindow());
    QTest::keyClick(desk.window.get(), Qt::Key_K, Qt::ControlModifier);
    auto* palette = desk.window->findChild<gui::CommandPalette*>("commandPalette");
    QVERIFY2(palette != nullptr,
             qPrintable("active window: " + testing::describe(QApplication::activeWindow())));
    QTRY_VERIFY(palette->isVisible());
    QTest::keyClicks(palette->findChild<QLineEdit*>("paletteQuery"), query);
    QVERIFY2(!palette->listed().isEmpty() && palette->listed().first() == expected,
             qPrintable(palette->listed().join(" | ")));
    QTest::keyClick(palette->findChild<QLineEdit*>("paletteQuery"), Qt::Key_Return);
    QTRY_VERIFY(desk.window->findChild<gui::CommandPalette*>("commandPalette") == nullptr);
}

QStringList paletteTexts(testing::Desk& desk)
{
    gui::CommandPalette* palette = desk.window->openPalette();
    if (palette == nullptr)
        return {};
    QStringList texts = palette->listed();
    palette->close();
    return texts;
}

}  // namespace

class TestGuiShell : public QObject {
    Q_OBJECT

    testing::GuiSite site_;

    testing::Desk signedIn(const std::string& user)
    {
        testing::Desk desk = site_.open(user);
        site_.signIn(desk, user);
        QApplication::setActiveWindow(desk.window.get());
        if (!QTest::qWaitForWindowActive(desk.window.get()))
            qWarning("the window did not become active");
        return desk;
    }

private slots:
    // sue holds a custom role with session.manage alone (made after the start: the role is new).
    void initTestCase()
    {
        site_.start({{"sue", ""}});
        auto alice = site_.daemon.as("alice");
        QVERIFY(alice->access().createRole("session-keeper", {"session.manage"}));
        QVERIFY(alice->access().grantRole("sue", "session-keeper", ""));
    }
    void cleanupTestCase() { QVERIFY(site_.daemon.stop()); }

    // The menus carry every window action with its shortcut, the toolbar the frequent ones with
    // the theme's icons, and the status bar says where, who, and how long until the lock.
    void menusToolbarAndStatusBar()
    {
        testing::Desk alice = signedIn("alice");
        QStringList menus;
        for (QAction* action : alice.window->menuBar()->actions())
            menus << action->text().remove('&');
        QCOMPARE(menus, (QStringList{"Session", "Go", "Help"}));
        auto* tools = alice.find<QToolBar>("mainToolBar");
        QCOMPARE(tools->actions().size(), 4);
        for (QAction* action : tools->actions()) {
            QVERIFY2(!action->icon().isNull(), qPrintable(action->text()));
            QVERIFY2(
                action->toolTip().contains(action->shortcut().toString(QKeySequence::NativeText)),
                qPrintable(action->toolTip()));
        }
        QCOMPARE(alice.window->findChild<QAction*>("paletteAction")->shortcut(),
                 QKeySequence(Qt::CTRL | Qt::Key_K));

        auto* where = alice.find<QLabel>("statusEndpoint");
        QVERIFY2(where->text().contains(QString::fromStdString(site_.daemon.tcpAddress())),
                 qPrintable(where->text()));
        QCOMPARE(alice.find<QLabel>("statusUser")->text(), QString("Signed in as alice"));
        const QRegularExpression countdown("^Locks after (\\d+):(\\d\\d) idle$");
        const auto first = countdown.match(alice.find<QLabel>("statusIdle")->text());
        QVERIFY2(first.hasMatch(), qPrintable(alice.find<QLabel>("statusIdle")->text()));
        QVERIFY2(first.captured(1).toInt() * 60 + first.captured(2).toInt() <= 300,
                 qPrintable(first.captured(0)));
        // The site forwards its audit log to a file and keeps no witness outside the directory.
        QTRY_VERIFY2_WITH_TIMEOUT(
            QRegularExpression("^Audit trail: forwarded, \\d+ behind; no witness outside$")
                .match(alice.find<QLabel>("statusHealth")->text())
                .hasMatch(),
            qPrintable(alice.find<QLabel>("statusHealth")->text()), 15000);

        // Ctrl+2 is the second screen listed (an admin's: Users and roles); Ctrl+1 the first.
        QTest::keyClick(alice.window.get(), Qt::Key_2, Qt::ControlModifier);
        QCOMPARE(currentScreen(alice), alice.window->screens().at(1));
        QTest::keyClick(alice.window.get(), Qt::Key_1, Qt::ControlModifier);
        QCOMPARE(currentScreen(alice), QString("overviewPage"));

        // Ctrl+L locks: the status bar says so, and the window actions wait for a sign-in.
        QTest::keyClick(alice.window.get(), Qt::Key_L, Qt::ControlModifier);
        QTRY_VERIFY(alice.window->locked());
        QCOMPARE(alice.find<QLabel>("statusUser")->text(), QString("Locked"));
        QVERIFY(alice.find<QLabel>("statusIdle")->text().isEmpty());
        QVERIFY(alice.find<QLabel>("statusHealth")->text().isEmpty());
        QVERIFY(!alice.window->findChild<QAction*>("paletteAction")->isEnabled());
        QVERIFY(alice.window->openPalette() == nullptr);
    }

    // An action of every screen run from the palette, each by the role that has the screen.
    void paletteRunsAnActionFromEachScreen()
    {
        testing::Desk alice = signedIn("alice");
        runFromPalette(alice, "go users", "Go to Users and roles");
        QCOMPARE(currentScreen(alice), QString("accessPage"));
        runFromPalette(alice, "go overv", "Go to Overview");
        QCOMPARE(currentScreen(alice), QString("overviewPage"));
        alice.find<QLineEdit>("newUserName")->setText("pia");
        runFromPalette(alice, "create user", "Users and roles › Create user");
        QCOMPARE(currentScreen(alice), QString("accessPage"));
        QTRY_VERIFY_WITH_TIMEOUT(!alice.find<QLineEdit>("accessCode")->text().isEmpty(), 15000);

        testing::Desk sam = signedIn("sam");
        runFromPalette(sam, "import", "Datasets › Import a dataset…");
        QCOMPARE(currentScreen(sam), QString("datasetsPage"));
        QDialog* wizard = nullptr;
        QTRY_VERIFY((wizard = sam.window->findChild<QDialog*>("importWizard")) != nullptr
                    && wizard->isVisible());
        wizard->reject();

        testing::Desk bob = signedIn("bob");
        runFromPalette(bob, "download checkpoint", "Jobs › Download the selected checkpoint");
        QCOMPARE(currentScreen(bob), QString("jobsPage"));
        QCOMPARE(bob.find<QTabWidget>("jobTabs")->currentWidget()->objectName(),
                 QString("checkpointsPanel"));
        QVERIFY(bob.find<QLabel>("checkpointStatus")->text().startsWith("Choose a checkpoint"));
        runFromPalette(bob, "go runs", "Go to Runs");
        QCOMPARE(currentScreen(bob), QString("runsPage"));
        runFromPalette(bob, "go models", "Go to Models");
        QCOMPARE(currentScreen(bob), QString("modelsPage"));

        testing::Desk otto = signedIn("otto");
        otto.find<QLineEdit>("workerName")->setText("gpu-node-7");
        otto.find<QLineEdit>("workerPool")->setText("cpu");
        runFromPalette(otto, "enrolment", "Workers › Make an enrolment token");
        QCOMPARE(currentScreen(otto), QString("workersPage"));
        QTRY_VERIFY2_WITH_TIMEOUT(!otto.find<QLineEdit>("enrollToken")->text().isEmpty(),
                                  qPrintable(otto.find<QLabel>("workersStatus")->text()), 15000);

        testing::Desk rita = signedIn("rita");
        runFromPalette(rita, "verify live", "Audit › Verify the live log");
        QCOMPARE(currentScreen(rita), QString("auditPage"));
        QTRY_VERIFY_WITH_TIMEOUT(!rita.find<QLabel>("auditVerdict")->text().isEmpty(), 15000);
        runFromPalette(rita, "check now", "Operations › Check now");
        QCOMPARE(currentScreen(rita), QString("operationsPage"));
        QCOMPARE(rita.find<QTabWidget>("operationsTabs")->currentWidget()->objectName(),
                 QString("trailTab"));
        QTRY_VERIFY_WITH_TIMEOUT(!rita.find<QLabel>("trailVerdict")->text().isEmpty(), 15000);
    }

    // What a role may not do is not offered: the screens it lacks and the buttons they hide,
    // before the screen was ever visited.
    void paletteOffersOnlyWhatTheUserMayDo()
    {
        testing::Desk bob = signedIn("bob");
        const QStringList engineer = paletteTexts(bob);
        QVERIFY(engineer.contains("Go to Jobs"));
        for (const QString& text : engineer)
            QVERIFY2(!text.contains("Audit") && !text.contains("Users and roles")
                         && !text.contains("Workers") && !text.contains("Import a dataset")
                         && !text.contains("Grant read"),
                     qPrintable(text));
        testing::Desk ann = signedIn("ann");
        for (const QString& text : paletteTexts(ann))
            QVERIFY2(!text.contains("Open a spec file"),
                     qPrintable(text));  // approves, submits not
        testing::Desk rita = signedIn("rita");
        const QStringList auditor = paletteTexts(rita);
        QVERIFY(auditor.contains("Audit › Verify the live log"));
        for (const QString& text : auditor)
            QVERIFY2(!text.startsWith("Datasets") && !text.startsWith("Jobs")
                         && !text.contains("Go to Workers"),
                     qPrintable(text));
        // A word that matches nothing lists nothing.
        QVERIFY(!gui::paletteMatches("Audit › Verify the live log", "verify bundle"));
        QVERIFY(gui::paletteMatches("Audit › Verify a bundle", "VERIFY bund"));
    }

    // A partial admin: sue may end sessions and nothing else of the Users and roles screen. Only
    // its Sessions tab shows, from sign-in on, and the palette offers nothing the other tabs
    // hold (AccessPage::permit).
    void accessScreenShowsOnlyItsTabs()
    {
        testing::Desk sue = signedIn("sue");
        QVERIFY(sue.window->screens().contains("accessPage"));
        auto* tabs = sue.find<QTabWidget>("accessTabs");
        QStringList shown;
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->isTabVisible(i))
                shown << tabs->tabText(i).remove('&');
        QCOMPARE(shown, QStringList{"Sessions"});
        const QStringList offered = paletteTexts(sue);
        QVERIFY2(offered.contains("Users and roles › End every session of this user"),
                 qPrintable(offered.join(" | ")));
        for (const QString& text : offered)
            QVERIFY2(!text.contains("Create user") && !text.contains("Confirm the request")
                         && !text.contains("Delete"),
                     qPrintable(text));
    }

    // Every screen and every tab of every role: Tab from the screen list goes round without a
    // trap and reaches every control shown; a screen reader has a name for each.
    void tabReachesEveryControlWithoutATrap()
    {
        for (const char* user : {"alice", "bob", "ann", "rita", "sam", "otto"}) {
            testing::Desk desk = signedIn(user);
            auto* navigation = desk.find<QListWidget>("navigation");
            const QWidget& workspace = *desk.find<QWidget>("workspace");
            for (const QString& screen : desk.window->screens()) {
                QVERIFY(desk.window->showScreen(screen));
                QList<QTabWidget*> tabWidgets;
                for (QTabWidget* tabs :
                     desk.find<QWidget>(qPrintable(screen))->findChildren<QTabWidget*>())
                    tabWidgets << tabs;
                const auto check = [&](const QString& where) {
                    const QStringList keys = testing::keyboardProblems(navigation, workspace);
                    QVERIFY2(keys.isEmpty(), qPrintable(where + ": " + keys.join("; ")));
                    const QStringList names = testing::screenReaderProblems(workspace);
                    QVERIFY2(names.isEmpty(), qPrintable(where + ": " + names.join("; ")));
                };
                check(QStringLiteral("%1 on %2").arg(user, screen));
                for (QTabWidget* tabs : tabWidgets) {
                    if (!tabs->isVisible())
                        continue;
                    for (int i = 0; i < tabs->count(); ++i) {
                        if (!tabs->isTabVisible(i))
                            continue;
                        tabs->setCurrentIndex(i);
                        check(
                            QStringLiteral("%1 on %2, tab %3").arg(user, screen, tabs->tabText(i)));
                    }
                }
            }
        }
    }

    // The dialogs: the palette, the password and two-factor changes, the import wizard; and a
    // secret typed into a field is announced as a secret and never read out.
    void dialogsHaveNoTrapAndKeepSecrets()
    {
        testing::Desk sam = signedIn("sam");
        gui::CommandPalette* palette = sam.window->openPalette();
        QTRY_VERIFY(palette->isVisible());
        QStringList problems = testing::screenReaderProblems(*palette);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
        palette->close();

        for (const char* button : {"changePasswordButton", "changeTotpButton"}) {
            QTest::mouseClick(sam.find<QPushButton>(button), Qt::LeftButton);
            QDialog* dialog = nullptr;
            QTRY_VERIFY(
                (dialog = sam.window->findChild<QDialog*>(
                     QString(button) == "changePasswordButton" ? "passwordDialog" : "totpDialog"))
                != nullptr);
            QTRY_VERIFY(dialog->isVisible());
            for (QLineEdit* field : dialog->findChildren<QLineEdit*>())
                if (field->echoMode() != QLineEdit::Normal && field->isVisible())
                    QTest::keyClicks(field, "a secret nobody hears");
            problems = testing::screenReaderProblems(*dialog);
            QVERIFY2(problems.isEmpty(), qPrintable(QString(button) + ": " + problems.join("; ")));
            const QList<QWidget*> controls = testing::shownControls(*dialog);
            QVERIFY(!controls.isEmpty());
            problems = testing::keyboardProblems(controls.first(), *dialog);
            QVERIFY2(problems.isEmpty(), qPrintable(QString(button) + ": " + problems.join("; ")));
            dialog->reject();
            QTRY_VERIFY(sam.window->findChild<QDialog*>(dialog->objectName()) == nullptr
                        || !dialog->isVisible());
        }

        QVERIFY(sam.window->showScreen("datasetsPage"));
        QTest::mouseClick(sam.find<QPushButton>("importDatasetButton"), Qt::LeftButton);
        QDialog* wizard = nullptr;
        QTRY_VERIFY((wizard = sam.window->findChild<QDialog*>("importWizard")) != nullptr
                    && wizard->isVisible());
        const QList<QWidget*> controls = testing::shownControls(*wizard);
        problems = testing::keyboardProblems(controls.first(), *wizard);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
        wizard->reject();

        // The sign-in page, signed out: the password field keeps its secret.
        QTest::mouseClick(sam.find<QPushButton>("signOutButton"), Qt::LeftButton);
        QTRY_VERIFY(!sam.session->signedIn());
        auto* page = sam.find<QWidget>("signInPage");
        QTest::keyClicks(sam.find<QLineEdit>("signInPassword"), "another secret unheard");
        problems = testing::screenReaderProblems(*page);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
    }
};

QTEST_MAIN(TestGuiShell)
#include "test_gui_shell.moc"
