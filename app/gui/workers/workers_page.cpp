// The workers screen (workers_page.h).
#include "workers_page.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace sealtrain::gui {

WorkerTableModel::WorkerTableModel(QObject* parent)
    : RowModel({tr("Worker"), tr("Pool"), tr("State"), tr("Last heartbeat"),
                tr("Certificate expires"), tr("Job"), tr("GPUs"), tr("Interconnect")},
               parent)
{
}

WorkerTableModel::Health WorkerTableModel::health(const api::WorkerSummary& worker,
                                                  std::int64_t nowUnix)
{
    Health health;
    if (worker.state != "active")
        return health;
    health.silent = worker.lastSeenUnix == 0 || nowUnix - worker.lastSeenUnix > kSilentAfter;
    health.expiring = worker.certificateExpiresUnix - nowUnix < kExpiryWarning;
    return health;
}

QVariant WorkerTableModel::cell(const api::WorkerSummary& worker, int column, int role) const
{
    const std::int64_t now = QDateTime::currentSecsSinceEpoch();
    const Health shown = health(worker, now);
    if (role == Qt::ForegroundRole
        && ((column == State && worker.state != "active") || (column == LastSeen && shown.silent)
            || (column == CertificateExpires && shown.expiring)))
        return QBrush(toneColor(Tone::Bad));
    if (role == Qt::ToolTipRole && column == LastSeen)
        return worker.lastSeenUnix == 0
                   ? tr("No heartbeat yet.")
                   : tr("%1 ago; a worker beats every few seconds while it runs.")
                         .arg(durationText(now - worker.lastSeenUnix));
    if (role == Qt::ToolTipRole && column == CertificateExpires)
        return worker.certificateExpiresUnix <= now
                   ? tr("Expired: the control plane refuses it; enrol it again.")
                   : tr("In %1; enrol it again before then.")
                         .arg(durationText(worker.certificateExpiresUnix - now));
    if (role == Qt::ToolTipRole)
        return QString::fromStdString(worker.inventoryJson);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Name: return QString::fromStdString(worker.name);
    case Pool: return QString::fromStdString(worker.pool);
    case State: return QString::fromStdString(worker.state);
    case LastSeen: return utcText(worker.lastSeenUnix);
    case CertificateExpires: return utcText(worker.certificateExpiresUnix);
    case Job: return worker.currentJob == 0 ? QString() : QString::number(worker.currentJob);
    case Gpus: {
        const QJsonObject inventory =
            QJsonDocument::fromJson(QByteArray::fromStdString(worker.inventoryJson)).object();
        QStringList names;
        for (const auto& gpu : inventory.value("gpus").toArray())
            names << gpu.toObject().value("name").toString();
        return names.isEmpty() ? tr("none (CPU)")
                               : QString("%1 × %2").arg(names.size()).arg(names.front());
    }
    case Interconnect: return worker.interconnectDeclared ? tr("declared encrypted") : QString();
    default: return {};
    }
}

WorkersPage::WorkersPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new WorkerTableModel(this))
    , table_(new QTableView(this))
    , name_(new QLineEdit(this))
    , pool_(new QLineEdit(this))
    , token_(new QPushButton(tr("Make an &enrolment token"), this))
    , tokenShown_(new QLineEdit(this))
    , reason_(new QLineEdit(this))
    , revoke_(new QPushButton(tr("&Revoke the selected worker"), this))
    , status_(new QLabel(this))
{
    setObjectName("workersPage");
    setUpTable(*table_, *model_, "workersTable", tr("Workers"));
    name_->setObjectName("workerName");
    name_->setPlaceholderText(tr("new worker's name"));
    name_->setAccessibleName(tr("New worker's name"));
    pool_->setObjectName("workerPool");
    pool_->setPlaceholderText(tr("pool, e.g. cpu or h100"));
    pool_->setAccessibleName(tr("Pool"));
    token_->setObjectName("enrollTokenButton");
    tokenShown_->setObjectName("enrollToken");
    tokenShown_->setReadOnly(true);
    tokenShown_->setAccessibleName(tr("The one-time enrolment token"));
    tokenShown_->setPlaceholderText(
        tr("the token appears here once; copy it to the node's operator"));
    reason_->setObjectName("revokeReason");
    reason_->setPlaceholderText(tr("why (kept in the audit log)"));
    reason_->setAccessibleName(tr("Reason for the revocation"));
    revoke_->setObjectName("revokeWorkerButton");
    status_->setObjectName("workersStatus");
    status_->setWordWrap(true);

    auto* enrol = new QHBoxLayout;
    enrol->addWidget(name_);
    enrol->addWidget(pool_);
    enrol->addWidget(token_);
    auto* revokeRow = new QHBoxLayout;
    revokeRow->addWidget(reason_, 1);
    revokeRow->addWidget(revoke_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(withFilter(*table_), 1);
    layout->addLayout(revokeRow);
    layout->addLayout(enrol);
    layout->addWidget(tokenShown_);
    layout->addWidget(status_);

    connect(token_, &QPushButton::clicked, this, &WorkersPage::makeToken);
    connect(revoke_, &QPushButton::clicked, this, &WorkersPage::revoke);
}

void WorkersPage::permit()
{
    const bool manages = session_.holds("worker.enroll");
    for (QWidget* widget :
         std::initializer_list<QWidget*>{name_, pool_, token_, tokenShown_, reason_, revoke_})
        widget->setVisible(manages);
}

void WorkersPage::reload()
{
    permit();
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->workers().listWorkers(); },
        [this](Result<std::vector<api::WorkerSummary>> workers) {
            if (!workers) {
                status_->setText(sentence(workers.error()));
                return;
            }
            model_->setRows(std::move(*workers));
            table_->resizeColumnsToContents();
        });
}

void WorkersPage::makeToken()
{
    auto client = session_.client();
    if (!client)
        return;
    tokenShown_->clear();
    runInBackground(
        this,
        [client, name = name_->text().trimmed().toStdString(),
         pool = pool_->text().trimmed().toStdString()] {
            constexpr std::int64_t kOneDay = std::int64_t{24} * 3600;
            return client->workers().createEnrollToken(name, pool, kOneDay);
        },
        [this](const Result<api::EnrollTokenGrant>& grant) {
            if (!grant) {
                status_->setText(sentence(grant.error()));
                return;
            }
            tokenShown_->setText(QString::fromStdString(grant->token));
            tokenShown_->selectAll();
            status_->setText(tr("The token works once, until %1; hand it to the node's operator "
                                "for 'sealtrain-worker enroll'.")
                                 .arg(utcText(grant->expiresUnix)));
        });
}

void WorkersPage::revoke()
{
    auto client = session_.client();
    const api::WorkerSummary* worker = model_->rowAt(table_->currentIndex().row());
    if (!client || worker == nullptr) {
        status_->setText(tr("Choose the worker to revoke in the table first."));
        return;
    }
    runInBackground(
        this,
        [client, name = worker->name, reason = reason_->text().toStdString()] {
            return client->workers().revokeWorker(name, reason);
        },
        [this](const Result<api::WorkerSummary>& revoked) {
            if (!revoked) {
                status_->setText(sentence(revoked.error()));
                return;
            }
            reason_->clear();
            status_->setText(tr("%1 is revoked: its certificate is refused from now on and its "
                                "job, if any, goes back to the queue.")
                                 .arg(QString::fromStdString(revoked->name)));
            reload();
        });
}

}  // namespace sealtrain::gui
