// The window: the sign-in page, or the workspace with one screen per concept, each listed only
// when WhoAmI's permissions allow it (the server still decides every call). The window locks
// itself after the idle time (the lesser of the session's idle limit and --lock-after): the
// session is signed out, its key forgotten, the content hidden behind the sign-in page until the
// user signs in again. A session the server ended (revoked, expired) brings the sign-in page
// back with the sentence saying so.
#pragma once

#include <QMainWindow>

#include <chrono>

class QAction;
class QLabel;
class QListWidget;
class QMenu;
class QPushButton;
class QStackedWidget;
class QTimer;

namespace sealtrain::gui {

class AccessPage;
class OperationsPage;
class AuditPage;
class DatasetsPage;
class JobsPage;
class ModelsPage;
class RunsPage;
class WorkersPage;
class OverviewPage;
class Session;
class SignInPage;

struct WindowOptions {
    std::chrono::seconds lockAfter{300};    // at most; the session's idle limit when shorter
    std::chrono::seconds refreshEvery{30};  // WhoAmI again: a revoked session shows soon
};

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    MainWindow(Session& session, WindowOptions options, QWidget* parent = nullptr);

    [[nodiscard]] bool locked() const noexcept { return locked_; }
    // The screens listed now, by object name ("overviewPage", "jobsPage", …).
    [[nodiscard]] QStringList screens() const;
    // Shows the screen named `objectName`; false when it is not listed.
    bool showScreen(const QString& objectName);
    // Locks at once, as the idle timer does.
    void lock();
    // Opens the command palette (Ctrl+K) over the window; null when signed out.
    class CommandPalette* openPalette();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Screen {
        QString title;
        QWidget* widget;
        QStringList icons;  // freedesktop names, the first the theme has
    };

    void enterWorkspace();
    void leaveWorkspace();
    // The menu bar, the toolbar and their shortcuts; the workspace's buttons do the same.
    void buildMenus(QPushButton* password, QPushButton* totp, QPushButton* lockNow,
                    QPushButton* signOut);
    void buildStatusBar();
    void updateStatus();
    // The audit trail's health for the status bar: forwarding and witnesses (GetServerInfo,
    // which any signed-in user may ask and which appends no entry).
    void checkHealth();
    [[nodiscard]] QList<Screen> allScreens() const;

    Session& session_;
    WindowOptions options_;
    QStackedWidget* pages_;
    SignInPage* signIn_;
    QWidget* workspace_;
    QListWidget* navigation_;
    QStackedWidget* screens_;
    OverviewPage* overview_;
    DatasetsPage* datasets_;
    JobsPage* jobs_;
    RunsPage* runs_;
    ModelsPage* models_;
    WorkersPage* workers_;
    AuditPage* audit_;
    AccessPage* access_;
    OperationsPage* operations_;
    QTimer* idle_;
    QTimer* refresh_;
    QTimer* tick_;  // the status bar's countdown to the lock
    QMenu* goMenu_ = nullptr;
    QList<QAction*> screenActions_;     // Go › one per listed screen, Ctrl+1 to Ctrl+9
    QList<QAction*> workspaceActions_;  // enabled only while signed in
    QAction* paletteAction_ = nullptr;
    QLabel* statusEndpoint_ = nullptr;
    QLabel* statusUser_ = nullptr;
    QLabel* statusIdle_ = nullptr;
    QLabel* statusHealth_ = nullptr;
    bool locked_ = false;
};

}  // namespace sealtrain::gui
