// The window (main_window.h).
#include "main_window.h"

#include "access/access_page.h"
#include "audit/audit_page.h"
#include "audit/audit_table_model.h"
#include "datasets/datasets_page.h"
#include "jobs/job_table_model.h"
#include "jobs/jobs_page.h"
#include "registry/models_page.h"
#include "runs/runs_page.h"
#include "session/overview_page.h"
#include "session/password_dialog.h"
#include "session/session.h"
#include "session/sign_in_page.h"
#include "session/totp_dialog.h"
#include "workers/workers_page.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

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
    , idle_(new QTimer(this))
    , refresh_(new QTimer(this))
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
    for (QWidget* screen : std::initializer_list<QWidget*>{overview_, datasets_, jobs_, runs_,
                                                           models_, workers_, audit_, access_})
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
    qApp->installEventFilter(this);
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
        return true;
    }
    return false;
}

void MainWindow::enterWorkspace()
{
    locked_ = false;
    navigation_->clear();
    const auto add = [this](const QString& title, QWidget* screen, bool allowed) {
        if (!allowed)
            return;
        auto* item = new QListWidgetItem(title, navigation_);
        item->setData(Qt::UserRole, screen->objectName());
    };
    add(tr("Overview"), overview_, true);
    add(tr("Datasets"), datasets_, session_.holds("dataset.read"));
    add(tr("Jobs"), jobs_, session_.holds("job.submit") || session_.holds("job.approve"));
    add(tr("Runs"), runs_, session_.holds("job.submit") || session_.holds("job.approve"));
    add(tr("Models"), models_, session_.holds("model.register") || session_.holds("model.approve"));
    add(tr("Workers"), workers_, session_.holds("worker.read"));
    add(tr("Audit"), audit_, session_.holds("audit.read"));
    add(tr("Users and roles"), access_, AccessPage::allowedFor(session_));
    pages_->setCurrentWidget(workspace_);
    navigation_->setCurrentRow(0);
    const auto& who = session_.who();
    auto lockAfter = options_.lockAfter;
    if (who && who->idleTimeoutSeconds > 0)
        lockAfter = std::min(lockAfter, std::chrono::seconds(who->idleTimeoutSeconds));
    idle_->start(std::chrono::duration_cast<std::chrono::milliseconds>(lockAfter));
    refresh_->start(std::chrono::duration_cast<std::chrono::milliseconds>(options_.refreshEvery));
}

void MainWindow::leaveWorkspace()
{
    idle_->stop();
    refresh_->stop();
    navigation_->clear();
    // Nothing of the last user's stays on screen behind the sign-in page.
    datasets_->model().setRows({});
    jobs_->model().setRows({});
    runs_->clear();
    models_->clear();
    workers_->model().setRows({});
    audit_->model().setRows({});
    access_->clear();
    pages_->setCurrentWidget(signIn_);
    signIn_->setLocked(locked_, {});
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
