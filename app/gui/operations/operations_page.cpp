// The Operations screen (operations_page.h).
#include "operations_page.h"

#include "backup_tab.h"
#include "compliance_tab.h"
#include "session/session.h"
#include "trail_tab.h"

#include <QTabWidget>
#include <QVBoxLayout>

namespace sealtrain::gui {

OperationsPage::OperationsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , tabs_(new QTabWidget(this))
    , backup_(new BackupTab(session, tabs_))
    , compliance_(new ComplianceTab(session, tabs_))
    , trail_(new TrailTab(session, tabs_))
{
    setObjectName("operationsPage");
    tabs_->setObjectName("operationsTabs");
    tabs_->addTab(backup_, tr("&Backup"));
    tabs_->addTab(compliance_, tr("&Compliance"));
    tabs_->addTab(trail_, tr("Audit &trail"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs_);
}

bool OperationsPage::allowedFor(const Session& session)
{
    return BackupTab::allowedFor(session) || ComplianceTab::allowedFor(session)
           || TrailTab::allowedFor(session);
}

void OperationsPage::permit()
{
    tabs_->setTabVisible(tabs_->indexOf(backup_), BackupTab::allowedFor(session_));
    tabs_->setTabVisible(tabs_->indexOf(compliance_), ComplianceTab::allowedFor(session_));
    tabs_->setTabVisible(tabs_->indexOf(trail_), TrailTab::allowedFor(session_));
}

void OperationsPage::reload()
{
    permit();
    if (BackupTab::allowedFor(session_))
        backup_->reload();
    if (TrailTab::allowedFor(session_))
        trail_->reload();
}

void OperationsPage::clear()
{
    backup_->clear();
    compliance_->clear();
    trail_->clear();
}

}  // namespace sealtrain::gui
