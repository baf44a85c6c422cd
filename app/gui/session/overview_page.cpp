// The overview screen (overview_page.h).
#include "overview_page.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "audit/head_check.h"
#include "session.h"

#include <QGridLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace sealtrain::gui {
namespace {

QLabel* panel(QWidget* parent, QVBoxLayout* layout, const QString& title, const char* name)
{
    auto* box = new QGroupBox(title, parent);
    auto* label = new QLabel(box);
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setAccessibleName(title);
    auto* inner = new QVBoxLayout(box);
    inner->addWidget(label);
    layout->addWidget(box);
    return label;
}

}  // namespace

OverviewPage::OverviewPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
{
    setObjectName("overviewPage");
    auto* layout = new QVBoxLayout(this);
    who_ = panel(this, layout, tr("Signed in"), "overviewWho");
    warnings_ = new QLabel(this);
    warnings_->setObjectName("overviewWarnings");
    warnings_->setWordWrap(true);
    warnings_->setStyleSheet(noticeStyle());
    warnings_->setAccessibleName(tr("Warnings"));
    layout->addWidget(warnings_);
    permissions_ = panel(this, layout, tr("What you may do"), "overviewPermissions");
    workers_ = panel(this, layout, tr("Workers"), "overviewWorkers");
    jobs_ = panel(this, layout, tr("Jobs"), "overviewJobs");
    budgets_ = new QGroupBox(tr("Budgets"), this);
    budgets_->setObjectName("overviewBudgets");
    budgetRows_ = new QGridLayout(budgets_);
    layout->addWidget(budgets_);
    auditHead_ = panel(this, layout, tr("Newest signed audit head"), "overviewAuditHead");
    server_ = panel(this, layout, tr("Control plane"), "overviewServer");
    layout->addStretch();
}

// Over 100 lines: one call, then each panel of the overview filled in the order it
// shows (to be split by panel with issue #51's screens).
void OverviewPage::reload()
{
    const auto& who = session_.who();
    if (!who)
        return;
    who_->setText(tr("%1, session %2, until %3; it ends after %4 minutes without use.")
                      .arg(QString::fromStdString(who->user),
                           QString::fromStdString(who->sessionId), utcText(who->expiresUnix))
                      .arg(who->idleTimeoutSeconds / 60));
    QStringList warnings;
    for (const std::string& warning : who->warnings)
        warnings << QString::fromStdString(warning);
    if (who->breakGlass)
        warnings << tr("You act under a break-glass grant: every action is flagged in the audit "
                       "log.");
    warnings_->setText(warnings.join("\n"));
    warnings_->setVisible(!warnings.isEmpty());
    QStringList scopes;
    for (const auto& [project, permissions] : who->permissions) {
        QStringList names;
        for (const std::string& permission : permissions)
            names << QString::fromStdString(permission);
        scopes << (project.empty() ? tr("Everywhere: %1").arg(names.join(", "))
                                   : tr("In project %1: %2")
                                         .arg(QString::fromStdString(project), names.join(", ")));
    }
    permissions_->setText(scopes.isEmpty() ? tr("Nothing yet: ask an admin for a grant.")
                                           : scopes.join("\n"));

    auto client = session_.client();
    if (!client)
        return;
    session_.askServerInfo(this, [this](const Result<api::ServerInfoView>& info) {
        server_->setText(info ? tr("sealtrain-control %1 (%2) at %3")
                                    .arg(QString::fromStdString(info->version),
                                         QString::fromStdString(info->apiVersion),
                                         session_.endpointText())
                              : sentence(info.error()));
    });
    workers_->parentWidget()->setVisible(session_.holds("worker.read"));
    if (session_.holds("worker.read"))
        runInBackground(
            this, [client] { return client->workers().listWorkers(); },
            [this](const Result<std::vector<api::WorkerSummary>>& workers) {
                if (!workers) {
                    workers_->setText(sentence(workers.error()));
                    return;
                }
                int active = 0;
                int gpus = 0;
                for (const api::WorkerSummary& worker : *workers) {
                    if (worker.state != "active")
                        continue;
                    ++active;
                    const QJsonObject inventory =
                        QJsonDocument::fromJson(QByteArray::fromStdString(worker.inventoryJson))
                            .object();
                    gpus += static_cast<int>(inventory.value("gpus").toArray().size());
                }
                workers_->setText(tr("%1 active workers with %2 GPUs (%3 enrolled in all)")
                                      .arg(active)
                                      .arg(gpus)
                                      .arg(workers->size()));
            });
    const bool jobs = session_.holds("job.submit") || session_.holds("job.approve");
    jobs_->parentWidget()->setVisible(jobs);
    if (jobs)
        runInBackground(
            this, [client] { return client->jobs().listJobs(); },
            [this](const Result<std::vector<api::JobSummary>>& listed) {
                if (!listed) {
                    jobs_->setText(sentence(listed.error()));
                    return;
                }
                std::map<std::string, int> byState;
                for (const api::JobSummary& job : *listed)
                    ++byState[job.state];
                jobs_->setText(tr("%1 running, %2 waiting for a worker, %3 waiting for an "
                                  "approval; %4 in all")
                                   .arg(byState["running"])
                                   .arg(byState["queued"])
                                   .arg(byState["vetted"])
                                   .arg(listed->size()));
            });
    const bool audit = session_.holds("audit.read");
    auditHead_->parentWidget()->setVisible(audit);
    if (audit)
        runInBackground(
            this,
            [client]() -> Result<HeadCheck> {
                auto keys = client->platform().signingKeys();
                if (!keys)
                    return keys.error();
                auto note = client->audit().newestAuditHead();
                if (!note)
                    return note.error();
                return checkSignedHead(*note, keys->auditPem);
            },
            [this](const Result<HeadCheck>& head) {
                auditHead_->setStyleSheet(head && !head->verified ? toneStyle(Tone::Bad) : "");
                auditHead_->setText(head ? head->text : sentence(head.error()));
            });
    budgets_->setVisible(jobs);
    if (jobs)
        runInBackground(
            this, [client] { return client->jobs().showPolicy(); },
            [this](const Result<api::PolicySummary>& policy) {
                if (!policy) {
                    clearBudgets();
                    auto* error = new QLabel(sentence(policy.error()), budgets_);
                    error->setObjectName("budgetError");
                    error->setWordWrap(true);
                    budgetRows_->addWidget(error, 0, 0, 1, 3);
                    return;
                }
                showBudgets(*policy);
            });
}

void OverviewPage::clearBudgets()
{
    while (QLayoutItem* item = budgetRows_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
}

void OverviewPage::showBudgets(const api::PolicySummary& policy)
{
    clearBudgets();
    if (policy.budgets.empty()) {
        auto* none = new QLabel(tr("No budget in the projects you work in."), budgets_);
        none->setObjectName("budgetNone");
        budgetRows_->addWidget(none, 0, 0, 1, 3);
        return;
    }
    int row = 0;
    // A row per project and kind of hours (GPU hours; CPU-hours, issue #54): the bar shows what
    // is held (what vetting counts against the budget), the text adds what has been used.
    // The project is named on its first row only: its two rows read as one group.
    const auto addRow = [&](const QString& project, const QString& prefix, const QString& unit,
                            double limit, double held, double used, double alertAt, bool named) {
        auto* bar = new QProgressBar(budgets_);
        bar->setObjectName(prefix + project);
        bar->setAccessibleName(tr("%1 held in project %2").arg(unit, project));
        bar->setRange(0, 1000);
        const double share = limit > 0 ? held / limit : 0.0;
        bar->setValue(static_cast<int>(std::min(share, 1.0) * 1000));
        bar->setTextVisible(false);  // the label beside it says the figures
        const bool alert = limit > 0 && share >= alertAt;
        bar->setStyleSheet(QStringLiteral("QProgressBar { border: 1px solid %1; background: %2; "
                                          "min-height: 12px; } QProgressBar::chunk { "
                                          "background: %3; }")
                               .arg(palette().color(QPalette::Mid).name(),
                                    palette().color(QPalette::Base).name(),
                                    toneColor(alert ? Tone::Bad : Tone::Accent).name()));
        auto* text = new QLabel(
            tr("%1 of %2 %3 held, %4 used%5")
                .arg(held, 0, 'f', 2)
                .arg(limit, 0, 'f', 2)
                .arg(unit)
                .arg(used, 0, 'f', 2)
                .arg(alert ? tr(" (at or above the %1 % alert)").arg(alertAt * 100, 0, 'f', 0)
                           : QString()),
            budgets_);
        text->setObjectName(prefix.left(prefix.size() - 1) + "Text_" + project);
        budgetRows_->addWidget(new QLabel(named ? project : QString(), budgets_), row, 0);
        budgetRows_->addWidget(bar, row, 1);
        budgetRows_->addWidget(text, row, 2);
        ++row;
    };
    for (const api::PolicySummary::Budget& budget : policy.budgets) {
        const QString project = QString::fromStdString(budget.project);
        addRow(project, "budget_", tr("GPU hours"), budget.gpuHours, budget.heldHours,
               budget.usedHours, budget.alertAt, true);
        addRow(project, "cpuBudget_", tr("CPU-hours"), budget.cpuHours, budget.cpuHeldHours,
               budget.cpuUsedHours, budget.alertAt, false);
    }
    budgetRows_->setColumnStretch(1, 1);
}

}  // namespace sealtrain::gui
