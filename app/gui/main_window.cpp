// The window (main_window.h).
#include "main_window.h"

#include "common/colors.h"

#include "access/access_page.h"
#include "audit/audit_page.h"
#include "audit/audit_table_model.h"
#include "common/background.h"
#include "datasets/datasets_page.h"
#include "jobs/job_table_model.h"
#include "jobs/jobs_page.h"
#include "operations/operations_page.h"
#include "registry/models_page.h"
#include "runs/runs_page.h"
#include "session/overview_page.h"
#include "session/password_dialog.h"
#include "session/session.h"
#include "session/sign_in_page.h"
#include "session/totp_dialog.h"
#include "shell/command_palette.h"
#include "shell/icons.h"
#include "workers/workers_page.h"

#include <QAction>
#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "sealtrain/base/version.h"

#include <algorithm>
#include <map>

namespace sealtrain::gui {

MainWindow::MainWindow(Session& session, WindowOptions options, QWidget* parent)
    : QMainWindow(parent)
    , session_(session)
    , options_(options)
    , pages_(new QStackedWidget(this))
    , signIn_(new SignInPage(session, pages_))
    , workspace_(new QWidget(pages_))
    , navigation_(new QListWidget(workspace_))
    , screens_(new QStackedWidget(workspace_))
    , overview_(new OverviewPage(session, screens_))
    , datasets_(new DatasetsPage(session, screens_))
    , jobs_(new JobsPage(session, screens_))
    , runs_(new RunsPage(session, screens_))
    , models_(new ModelsPage(session, screens_))
    , workers_(new WorkersPage(session, screens_))
    , audit_(new AuditPage(session, screens_))
    , access_(new AccessPage(session, screens_))
    , operations_(new OperationsPage(session, screens_))
    , idle_(new QTimer(this))
    , refresh_(new QTimer(this))
    , tick_(new QTimer(this))
{
    setObjectName("mainWindow");
    setWindowTitle(tr("Sealtrain"));
    workspace_->setObjectName("workspace");
    navigation_->setObjectName("navigation");
    navigation_->setAccessibleName(tr("Screens"));
    navigation_->setMaximumWidth(navigation_->fontMetrics().horizontalAdvance("M") * 16);
    auto* signOut = new QPushButton(tr("Sign &out"), workspace_);
    signOut->setObjectName("signOutButton");
    auto* password = new QPushButton(tr("Change &password…"), workspace_);
    password->setObjectName("changePasswordButton");
    auto* totp = new QPushButton(tr("Change two-&factor…"), workspace_);
    totp->setObjectName("changeTotpButton");
    auto* lockNow = new QPushButton(tr("&Lock"), workspace_);
    lockNow->setObjectName("lockButton");
    auto* side = new QVBoxLayout;
    side->addWidget(navigation_, 1);
    side->addWidget(password);
    side->addWidget(totp);
    side->addWidget(lockNow);
    side->addWidget(signOut);
    auto* columns = new QHBoxLayout(workspace_);
    columns->addLayout(side);
    columns->addWidget(screens_, 1);
    for (QWidget* screen : std::initializer_list<QWidget*>{
             overview_, datasets_, jobs_, runs_, models_, workers_, audit_, access_, operations_})
        screens_->addWidget(screen);
    pages_->addWidget(signIn_);
    pages_->addWidget(workspace_);
    setCentralWidget(pages_);
    resize(1200, 800);

    connect(navigation_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0)
            return;
        showScreen(navigation_->item(row)->data(Qt::UserRole).toString());
    });
    connect(signOut, &QPushButton::clicked, &session_, &Session::signOut);
    connect(password, &QPushButton::clicked, this, [this] {
        auto* dialog = new PasswordDialog(session_, this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
    connect(totp, &QPushButton::clicked, this, [this] {
        auto* dialog = new TotpDialog(session_, this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
    connect(lockNow, &QPushButton::clicked, this, &MainWindow::lock);
    connect(&session_, &Session::signedInChanged, this, [this] {
        if (session_.signedIn())
            enterWorkspace();
        else
            leaveWorkspace();
    });
    idle_->setSingleShot(true);
    connect(idle_, &QTimer::timeout, this, &MainWindow::lock);
    connect(refresh_, &QTimer::timeout, &session_, &Session::refresh);
    buildMenus(password, totp, lockNow, signOut);
    buildStatusBar();
    qApp->installEventFilter(this);
}

QList<MainWindow::Screen> MainWindow::allScreens() const
{
    return {
        {tr("Overview"), overview_, {"go-home", "user-home"}},
        {tr("Datasets"), datasets_, {"server-database", "folder-database", "drive-harddisk"}},
        {tr("Jobs"), jobs_, {"system-run", "media-playback-start"}},
        {tr("Runs"), runs_, {"office-chart-line", "view-statistics", "utilities-system-monitor"}},
        {tr("Models"), models_, {"package-x-generic", "application-x-archive"}},
        {tr("Workers"), workers_, {"computer", "network-server"}},
        {tr("Audit"), audit_, {"view-list-details", "document-properties", "text-x-generic"}},
        {tr("Users and roles"), access_, {"system-users", "user-identity", "avatar-default"}},
        {tr("Operations"), operations_, {"preferences-system", "applications-system"}},
    };
}

void MainWindow::buildMenus(QPushButton* password, QPushButton* totp, QPushButton* lockNow,
                            QPushButton* signOut)
{
    const auto pressing = [this](QMenu* menu, const QString& text, QPushButton* button,
                                 const QStringList& icons, const QKeySequence& keys,
                                 const char* name) {
        auto* action = menu->addAction(themeIcon(icons), text, button, &QPushButton::click);
        action->setObjectName(name);
        action->setShortcut(keys);
        workspaceActions_ << action;
        return action;
    };
    QMenu* sessionMenu = menuBar()->addMenu(tr("&Session"));
    sessionMenu->setObjectName("sessionMenu");
    pressing(sessionMenu, tr("Change &password…"), password, {"dialog-password", "document-edit"},
             {}, "changePasswordAction");
    pressing(sessionMenu, tr("Change two-&factor…"), totp, {"security-high", "channel-secure"}, {},
             "changeTotpAction");
    sessionMenu->addSeparator();
    QAction* lockAction =
        pressing(sessionMenu, tr("&Lock"), lockNow, {"object-locked", "system-lock-screen"},
                 QKeySequence(Qt::CTRL | Qt::Key_L), "lockAction");
    QAction* signOutAction =
        pressing(sessionMenu, tr("Sign &out"), signOut, {"system-log-out"},
                 QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Q), "signOutAction");
    sessionMenu->addSeparator();
    QAction* quit =
        sessionMenu->addAction(themeIcon({"application-exit"}), tr("&Quit"), this, &QWidget::close);
    quit->setObjectName("quitAction");
    quit->setShortcut(QKeySequence::Quit);

    goMenu_ = menuBar()->addMenu(tr("&Go"));
    goMenu_->setObjectName("goMenu");
    paletteAction_ = goMenu_->addAction(themeIcon({"search", "edit-find"}), tr("&Command palette…"),
                                        this, [this] { openPalette(); });
    paletteAction_->setObjectName("paletteAction");
    paletteAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    QAction* reload =
        goMenu_->addAction(themeIcon({"view-refresh"}), tr("&Refresh this screen"), this, [this] {
            QWidget* current = screens_->currentWidget();
            if (current == audit_)
                audit_->reload();
            else
                showScreen(current->objectName());
        });
    reload->setObjectName("refreshAction");
    reload->setShortcut(QKeySequence::Refresh);
    workspaceActions_ << paletteAction_ << reload;
    goMenu_->addSeparator();

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->setObjectName("helpMenu");
    QAction* about =
        help->addAction(themeIcon({"help-about"}), tr("&About Sealtrain"), this, [this] {
            QMessageBox::about(this, tr("About Sealtrain"),
                               tr("<b>Sealtrain</b> %1<br>The desktop of a training platform for "
                                  "regulated teams: a client of its control plane, holding no key "
                                  "of the platform's.")
                                   .arg(QString::fromUtf8(kVersion)));
        });
    about->setObjectName("aboutAction");

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName("mainToolBar");
    tools->setMovable(false);
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    for (QAction* action : {paletteAction_, reload, lockAction, signOutAction})
        tools->addAction(action);
    for (QAction* action : workspaceActions_) {
        action->setEnabled(false);
        if (!action->shortcut().isEmpty())
            action->setToolTip(QStringLiteral("%1 (%2)").arg(
                action->text().remove('&'), action->shortcut().toString(QKeySequence::NativeText)));
    }
}

void MainWindow::buildStatusBar()
{
    statusEndpoint_ = new QLabel(this);
    statusEndpoint_->setObjectName("statusEndpoint");
    statusUser_ = new QLabel(this);
    statusUser_->setObjectName("statusUser");
    statusIdle_ = new QLabel(this);
    statusIdle_->setObjectName("statusIdle");
    statusHealth_ = new QLabel(this);
    statusHealth_->setObjectName("statusHealth");
    statusBar()->setObjectName("statusBar");
    statusBar()->addWidget(statusEndpoint_, 1);
    statusBar()->addPermanentWidget(statusHealth_);
    statusBar()->addPermanentWidget(statusUser_);
    statusBar()->addPermanentWidget(statusIdle_);
    tick_->setInterval(1000);
    connect(tick_, &QTimer::timeout, this, &MainWindow::updateStatus);
    connect(&session_, &Session::whoChanged, this, &MainWindow::updateStatus);
    connect(&session_, &Session::connected, this, &MainWindow::updateStatus);
    connect(refresh_, &QTimer::timeout, this, &MainWindow::checkHealth);
    updateStatus();
}

void MainWindow::checkHealth()
{
    session_.askServerInfo(this, [this](const Result<api::ServerInfoView>& info) {
        if (!session_.signedIn())
            return;
        if (!info) {
            statusHealth_->setText(tr("Audit trail: unknown"));
            statusHealth_->setToolTip(sentence(info.error()));
            return;
        }
        QString forwarding = tr("not forwarded");
        bool failing = false;
        if (const auto& f = info->auditForwarding) {
            failing = f->failingSinceUnix != 0;
            forwarding = failing ? tr("forwarding failing, %1 behind").arg(f->lag())
                                 : tr("forwarded, %1 behind").arg(f->lag());
        }
        const QString witnesses = info->auditWitnessesOutside == 0
                                      ? tr("no witness outside")
                                      : tr("%n witness(es) outside", nullptr,
                                           static_cast<int>(info->auditWitnessesOutside));
        statusHealth_->setText(tr("Audit trail: %1; %2").arg(forwarding, witnesses));
        statusHealth_->setStyleSheet(failing ? toneStyle(Tone::Bad) : QString());
        statusHealth_->setToolTip(
            tr("Where the audit log is kept besides this control plane: a SIEM that receives "
               "each entry as it is written (the Audit screen has the counts), and witnesses "
               "outside the data directory that keep every signed head "
               "(docs/operations/data-directory.md)."));
    });
}

void MainWindow::updateStatus()
{
    statusEndpoint_->setText(tr("Control plane: %1").arg(session_.endpointText()));
    const auto& who = session_.who();
    if (!session_.signedIn() || !who) {
        statusUser_->setText(locked_ ? tr("Locked") : tr("Signed out"));
        statusIdle_->clear();
        statusHealth_->clear();
        return;
    }
    const QString user = QString::fromStdString(who->user);
    statusUser_->setText(who->breakGlass ? tr("Signed in as %1, break-glass").arg(user)
                                         : tr("Signed in as %1").arg(user));
    const int seconds = idle_->isActive() ? std::max(0, idle_->remainingTime()) / 1000 : 0;
    statusIdle_->setText(
        tr("Locks after %1:%2 idle").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0')));
}

CommandPalette* MainWindow::openPalette()
{
    if (!session_.signedIn())
        return nullptr;
    QList<PaletteEntry> entries;
    for (QAction* action : screenActions_)
        entries << actionEntry(action);
    for (const Screen& screen : allScreens()) {
        if (!screens().contains(screen.widget->objectName()))
            continue;
        const QString name = screen.widget->objectName();
        entries << pageEntries(screen.title, screen.widget, [this, name] { showScreen(name); });
    }
    for (QAction* action : workspaceActions_)
        if (action != paletteAction_)
            entries << actionEntry(action);
    auto* palette = new CommandPalette(entries, this);
    palette->setAttribute(Qt::WA_DeleteOnClose);
    palette->open();
    return palette;
}

QStringList MainWindow::screens() const
{
    QStringList names;
    for (int row = 0; row < navigation_->count(); ++row)
        names << navigation_->item(row)->data(Qt::UserRole).toString();
    return names;
}

bool MainWindow::showScreen(const QString& objectName)
{
    for (int i = 0; i < screens_->count(); ++i) {
        QWidget* screen = screens_->widget(i);
        if (screen->objectName() != objectName || !screens().contains(objectName))
            continue;
        screens_->setCurrentWidget(screen);
        for (int row = 0; row < navigation_->count(); ++row) {
            if (navigation_->item(row)->data(Qt::UserRole).toString() != objectName)
                continue;
            const QSignalBlocker quiet(navigation_);
            navigation_->setCurrentRow(row);
        }
        if (screen == overview_)
            overview_->reload();
        else if (screen == datasets_)
            datasets_->reload();
        else if (screen == jobs_)
            jobs_->reload();
        else if (screen == runs_)
            runs_->reload();
        else if (screen == models_)
            models_->reload();
        else if (screen == workers_)
            workers_->reload();
        else if (screen == audit_ && audit_->model().rowCount() == 0)
            audit_->reload();
        else if (screen == access_)
            access_->reload();
        else if (screen == operations_)
            operations_->reload();
        return true;
    }
    return false;
}

void MainWindow::enterWorkspace()
{
    locked_ = false;
    navigation_->clear();
    qDeleteAll(screenActions_);
    screenActions_.clear();
    const bool trains = session_.holds("job.submit") || session_.holds("job.approve");
    const std::map<QWidget*, bool> allowed{
        {overview_, true},
        {datasets_, session_.holds("dataset.read")},
        {jobs_, trains},
        {runs_, trains},
        {models_, session_.holds("model.register") || session_.holds("model.approve")},
        {workers_, session_.holds("worker.read")},
        {audit_, session_.holds("audit.read")},
        {access_, AccessPage::allowedFor(session_)},
        {operations_, OperationsPage::allowedFor(session_)},
    };
    for (const Screen& screen : allScreens()) {
        if (!allowed.at(screen.widget))
            continue;
        const QIcon icon = themeIcon(screen.icons);
        auto* item = new QListWidgetItem(icon, screen.title, navigation_);
        const QString name = screen.widget->objectName();
        item->setData(Qt::UserRole, name);
        auto* go = goMenu_->addAction(icon, tr("Go to %1").arg(screen.title), this,
                                      [this, name] { showScreen(name); });
        go->setObjectName("goTo_" + name);
        go->setShortcut(QKeySequence(QStringLiteral("Ctrl+%1").arg(screenActions_.size() + 1)));
        screenActions_ << go;
    }
    for (QAction* action : workspaceActions_)
        action->setEnabled(true);
    access_->permit();
    datasets_->permit();
    jobs_->permit();
    workers_->permit();
    operations_->permit();
    models_->permit();
    tick_->start();
    checkHealth();
    pages_->setCurrentWidget(workspace_);
    navigation_->setCurrentRow(0);
    const auto& who = session_.who();
    auto lockAfter = options_.lockAfter;
    if (who && who->idleTimeoutSeconds > 0)
        lockAfter = std::min(lockAfter, std::chrono::seconds(who->idleTimeoutSeconds));
    idle_->start(std::chrono::duration_cast<std::chrono::milliseconds>(lockAfter));
    refresh_->start(std::chrono::duration_cast<std::chrono::milliseconds>(options_.refreshEvery));
    updateStatus();
}

void MainWindow::leaveWorkspace()
{
    idle_->stop();
    refresh_->stop();
    tick_->stop();
    navigation_->clear();
    qDeleteAll(screenActions_);
    screenActions_.clear();
    for (QAction* action : workspaceActions_)
        action->setEnabled(false);
    // Nothing of the last user's stays on screen behind the sign-in page.
    datasets_->model().setRows({});
    jobs_->model().setRows({});
    runs_->clear();
    models_->clear();
    workers_->model().setRows({});
    audit_->model().setRows({});
    access_->clear();
    operations_->clear();
    pages_->setCurrentWidget(signIn_);
    signIn_->setLocked(locked_, {});
    updateStatus();
}

void MainWindow::lock()
{
    if (!session_.signedIn())
        return;
    const QString user = QString::fromStdString(session_.who()->user);
    locked_ = true;
    session_.signOut();  // signedInChanged: leaveWorkspace
    signIn_->setLocked(true, user);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    switch (event->type()) {
    case QEvent::KeyPress:
    case QEvent::MouseButtonPress:
    case QEvent::MouseMove:
    case QEvent::Wheel:
        if (idle_->isActive())
            idle_->start();
        break;
    default: break;
    }
    return QMainWindow::eventFilter(watched, event);
}

}  // namespace sealtrain::gui
