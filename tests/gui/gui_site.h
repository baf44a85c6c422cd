// What the GUI's tests and its screenshot tour share (issue #29): a real sealtrain-control with
// the users of every role and a dataset, and a desk per person (their own profile folder,
// session and window) signed in through the real forms, widgets found by objectName.
#pragma once

#include "../integration/daemon_fixture.h"

#include "main_window.h"
#include "session/session.h"
#include "session/sign_in_page.h"

#include "sealtrain/crypto/certificate_authority.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSet>
#include <QTabBar>
#include <QToolBar>
#include <QtTest/QtTest>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::testing {

// A job spec on the site's dataset, named %1.
inline constexpr const char* kGuiSpec = "spec_version: 1\nname: %1\nproject: demo\n"
                                        "dataset: notes\n"
                                        "model: {layers: 1, heads: 1, width: 8, context: 8}\n"
                                        "schedule: {steps: 10, batch: 2}\n"
                                        "resources: {pool: cpu, device: cpu, threads: 1}\n";

// One person's desktop: their own profile folder, session and window.
struct Desk {
    std::unique_ptr<gui::Session> session;
    std::unique_ptr<gui::MainWindow> window;

    template <typename T>
    T* find(const char* name) const
    {
        auto* found = window->findChild<T*>(name);
        if (found == nullptr)
            qFatal("no widget named %s", name);
        return found;
    }
    [[nodiscard]] QString signInError() const { return find<QLabel>("signInError")->text(); }
};

// The controls under `root` that a keyboard or a screen reader can not use (docs/gui.md,
// "Keyboard and screen readers"): each visible control that takes input must be reachable with
// Tab and must have a name a screen reader reads (its accessible name, a label whose buddy it
// is, or a button's own text, mnemonic stripped); each as "objectName (class): what is wrong".
inline QStringList unusableControls(const QWidget& root)
{
    QSet<const QWidget*> labelled;
    for (const QLabel* label : root.findChildren<QLabel*>())
        if (label->buddy() != nullptr && !label->text().isEmpty())
            labelled.insert(label->buddy());
    QStringList problems;
    for (const QWidget* widget : root.findChildren<QWidget*>()) {
        const bool control = qobject_cast<const QAbstractButton*>(widget) != nullptr
                             || qobject_cast<const QLineEdit*>(widget) != nullptr
                             || qobject_cast<const QComboBox*>(widget) != nullptr
                             || qobject_cast<const QAbstractSpinBox*>(widget) != nullptr
                             || qobject_cast<const QPlainTextEdit*>(widget) != nullptr
                             || qobject_cast<const QAbstractItemView*>(widget) != nullptr;
        // Parts of a composite (a spin box's line edit, a combo box's view, a table's corner
        // button or scroll bars, a tab bar's scroll arrows) are reached through their owner.
        if (!control || !widget->isVisibleTo(&root) || widget->objectName().startsWith("qt_")
            || qobject_cast<const QAbstractSpinBox*>(widget->parentWidget()) != nullptr
            || qobject_cast<const QComboBox*>(widget->parentWidget()) != nullptr
            || qobject_cast<const QAbstractItemView*>(widget->parentWidget()) != nullptr
            || qobject_cast<const QTabBar*>(widget->parentWidget()) != nullptr
            // A toolbar's buttons repeat menu actions, each with its shortcut (docs/gui.md).
            || qobject_cast<const QToolBar*>(widget->parentWidget()) != nullptr)
            continue;
        const QString who = QStringLiteral("%1 (%2)").arg(
            widget->objectName().isEmpty() ? QStringLiteral("unnamed") : widget->objectName(),
            widget->metaObject()->className());
        if ((widget->focusPolicy() & Qt::TabFocus) == 0)
            problems << who + ": not reachable with Tab";
        QString text;
        if (const auto* button = qobject_cast<const QAbstractButton*>(widget))
            text = button->text();
        text.remove('&');
        if (widget->accessibleName().trimmed().isEmpty() && text.trimmed().isEmpty()
            && !labelled.contains(widget))
            problems << who + ": no name for a screen reader";
    }
    return problems;
}

class GuiSite {
public:
    // alice the admin; bob and ivy engineers (ivy an approver too, unless a second admin is
    // among `more`: then her grant waits for them), ann an approver, rita an auditor, sam a
    // steward, otto an operator, and `more`; the dataset notes, readable by bob and ivy.
    void start(const std::vector<DaemonUser>& more = {})
    {
        if (!tmp_.isValid())
            qFatal("no temporary folder");
        std::vector<DaemonUser> users{{"bob", "engineer"}, {"ivy", "engineer"},
                                      {"ann", "approver"}, {"rita", "auditor"},
                                      {"sam", "steward"},  {"otto", "operator"}};
        users.insert(users.end(), more.begin(), more.end());
        daemon.create(tmp_.path().toStdString(), "alice", users);
        // The SIEM's copy, whose health the audit screen shows (issue #49).
        daemon.start({"--audit-forward", "file:" + tmp_.filePath("siem.jsonl")});
        fingerprint = crypto::certificateFingerprint(daemon.caPem()).value();
        if (!daemon.as("alice")->access().grantRole("ivy", "approver", ""))
            qFatal("ivy's approver grant");
        const std::filesystem::path text = tmp_.filePath("notes.txt").toStdString();
        std::ofstream(text) << "first record\n\nsecond record\n";
        api::ImportSettings settings;
        settings.name = "notes";
        settings.format = "text-records";
        auto sam = daemon.as("sam");
        auto imported = sam->datasets().importDataset(
            settings, {{text, "notes.txt", std::filesystem::file_size(text)}}, {});
        if (!imported)
            qFatal("import: %s", imported.error().message().c_str());
        if (!sam->datasets().grantRead("notes", "bob")
            || !sam->datasets().grantRead("notes", "ivy"))
            qFatal("read grants");
    }

    [[nodiscard]] QString path(const QString& name) const { return tmp_.filePath(name); }

    // `controlExecutable`: the sealtrain-control the desk may run tools of (verify-backup).
    Desk open(const std::string& user, gui::WindowOptions options = {},
              const std::filesystem::path& controlExecutable = {})
    {
        Desk desk;
        desk.session = std::make_unique<gui::Session>(
            std::filesystem::path(tmp_.path().toStdString()) / ("profile-" + user),
            controlExecutable);
        desk.window = std::make_unique<gui::MainWindow>(*desk.session, options);
        desk.window->show();
        return desk;
    }

    // Connects `desk` through the form when it has no control plane yet.
    void connect(Desk& desk)
    {
        if (!desk.find<QGroupBox>("connectBox")->isVisible())
            return;
        desk.find<QLineEdit>("connectAddress")
            ->setText(QString::fromStdString(daemon.tcpAddress()));
        desk.find<QLineEdit>("connectFingerprint")->setText(QString::fromStdString(fingerprint));
        QTest::mouseClick(desk.find<QPushButton>("connectButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!desk.find<QGroupBox>("connectBox")->isVisible(), 15000);
    }

    // Connects `desk`, then signs `user` in with the next TOTP code.
    void signIn(Desk& desk, const std::string& user)
    {
        connect(desk);
        desk.find<QLineEdit>("signInUser")->setText(QString::fromStdString(user));
        QTest::keyClicks(desk.find<QLineEdit>("signInPassword"), kDaemonPassword);
        QTest::keyClicks(desk.find<QLineEdit>("signInTotp"),
                         QString::fromStdString(daemon.code(user)));
        QTest::mouseClick(desk.find<QPushButton>("signInButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(desk.session->signedIn(), qPrintable(desk.signInError()), 20000);
        QVERIFY(desk.find<QWidget>("workspace")->isVisible());
    }

    // A desk on a new profile under `folder` that names no control plane: it may make one on
    // this workstation (`initExecutable`, sealtrainctl, with a cheap Argon2id for tests) and start
    // it (`controlExecutable`).
    static Desk openWorkstation(const std::filesystem::path& folder,
                                const std::filesystem::path& controlExecutable,
                                const std::filesystem::path& initExecutable)
    {
        Desk desk;
        desk.session = std::make_unique<gui::Session>(folder / "profile", controlExecutable);
        desk.session->setInitExecutable(initExecutable);
        desk.window = std::make_unique<gui::MainWindow>(*desk.session, gui::WindowOptions{});
        desk.window->show();
        desk.find<gui::SignInPage>("signInPage")
            ->setFirstRunArguments({"--argon2-ops", "2", "--argon2-mem-mib", "64"});
        return desk;
    }

    DaemonFixture daemon;
    std::string fingerprint;

private:
    QTemporaryDir tmp_;
};

}  // namespace sealtrain::testing
