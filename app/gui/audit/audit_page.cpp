// The audit screen (audit_page.h).
#include "audit_page.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"
#include "audit_table_model.h"
#include "common/path_field.h"

#include "audit_report.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

#include <filesystem>

namespace sealtrain::gui {
namespace {

constexpr std::uint32_t kPage = 500;

struct ExportedAudit {
    std::string warning;           // the four-eyes warning, when the control plane gave one
    std::filesystem::path report;  // empty: no report asked for
    std::string verdict;           // the report's
};

}  // namespace

AuditPage::AuditPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new AuditTableModel(this))
    , table_(new QTableView(this))
    , actor_(new QLineEdit(this))
    , action_(new QLineEdit(this))
    , outcome_(new QComboBox(this))
    , apply_(new QPushButton(tr("&Filter"), this))
    , verify_(new QPushButton(tr("&Verify the live log"), this))
    , verdict_(new QLabel(this))
    , exportPath_(new QLineEdit(this))
    , export_(new QPushButton(tr("&Export a bundle"), this))
    , withReport_(new QCheckBox(tr("with a PDF &report"), this))
    , bundlePath_(new QLineEdit(this))
    , openBundle_(new QPushButton(tr("Verify a &bundle"), this))
    , status_(new QLabel(this))
    , forwarding_(new QLabel(this))
{
    setObjectName("auditPage");
    setUpTable(*table_, *model_, "auditTable", tr("Audit entries"));
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Fixed row heights: 10,000 entries scroll without measuring each row.
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    actor_->setObjectName("auditActor");
    actor_->setAccessibleName(tr("Actor"));
    actor_->setPlaceholderText(tr("any actor"));
    action_->setObjectName("auditAction");
    action_->setAccessibleName(tr("Action"));
    action_->setPlaceholderText(tr("any action, or e.g. job.*"));
    outcome_->setObjectName("auditOutcome");
    outcome_->setAccessibleName(tr("Outcome"));
    outcome_->addItem(tr("any outcome"), QString());
    for (const char* outcome : {"ok", "denied", "failed"})
        outcome_->addItem(outcome, QString(outcome));
    apply_->setObjectName("auditApply");
    verify_->setObjectName("auditVerifyLive");
    verdict_->setObjectName("auditVerdict");
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    exportPath_->setObjectName("auditExportPath");
    exportPath_->setAccessibleName(tr("Where to save the bundle"));
    exportPath_->setPlaceholderText(tr("bundle file to write"));
    export_->setObjectName("auditExport");
    withReport_->setObjectName("auditExportReport");
    withReport_->setToolTip(tr("Also write the report for a reviewer beside the bundle (the same "
                               "name, .pdf), verified against the control plane's audit key."));
    bundlePath_->setObjectName("auditBundlePath");
    bundlePath_->setAccessibleName(tr("A bundle to verify"));
    bundlePath_->setPlaceholderText(tr("bundle file someone sent"));
    openBundle_->setObjectName("auditOpenBundle");
    status_->setObjectName("auditStatus");
    forwarding_->setObjectName("auditForwarding");
    forwarding_->setWordWrap(true);
    forwarding_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("Actor"), this));
    filters->addWidget(actor_);
    filters->addWidget(new QLabel(tr("Action"), this));
    filters->addWidget(action_);
    filters->addWidget(outcome_);
    filters->addWidget(apply_);
    auto* files = new QHBoxLayout;
    files->addWidget(withBrowse(exportPath_, PathKind::SaveFile, tr("Save the audit bundle"),
                                QStringLiteral("audit.bundle")),
                     1);
    files->addWidget(withReport_);
    files->addWidget(export_);
    files->addWidget(withBrowse(bundlePath_, PathKind::OpenFile, tr("A bundle to verify")), 1);
    files->addWidget(openBundle_);
    auto* live = new QHBoxLayout;
    live->addWidget(verify_);
    live->addWidget(verdict_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(table_, 1);
    layout->addWidget(status_);
    layout->addWidget(forwarding_);
    layout->addLayout(live);
    layout->addLayout(files);

    connect(apply_, &QPushButton::clicked, this, &AuditPage::reload);
    connect(actor_, &QLineEdit::returnPressed, this, &AuditPage::reload);
    connect(action_, &QLineEdit::returnPressed, this, &AuditPage::reload);
    connect(table_->verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (value >= table_->verticalScrollBar()->maximum() - 20)
            loadMore();
    });
    connect(verify_, &QPushButton::clicked, this, &AuditPage::verifyLive);
    connect(export_, &QPushButton::clicked, this, &AuditPage::exportBundle);
    connect(openBundle_, &QPushButton::clicked, this, [this] {
        QString path = bundlePath_->text().trimmed();
        if (path.isEmpty())
            path = QFileDialog::getOpenFileName(this, tr("A bundle to verify"));
        if (path.isEmpty())
            return;
        bundlePath_->setText(path);
        auto client = session_.client();
        if (!client) {
            verdict_->setText(verifyBundleFile(path, {}));
            return;
        }
        // The key the bundle must be signed with: the platform's, as this control plane says.
        runInBackground(
            this, [client] { return client->platform().signingKeys(); },
            [this, path](const Result<api::SigningKeys>& keys) {
                verdict_->setText(verifyBundleFile(path, keys ? keys->auditPem : std::string()));
            });
    });
}

void AuditPage::reload()
{
    ++generation_;
    model_->setRows({});
    cursor_ = 0;
    exhausted_ = false;
    loading_ = false;
    loadMore();
    showForwarding();
}

// docs/formats/audit-forward.md, "Delivery": the counts and times the control plane gives.
void AuditPage::showForwarding()
{
    session_.askServerInfo(this, [this](const Result<api::ServerInfoView>& info) {
        if (!info) {
            forwarding_->setText(tr("Forwarding: unknown (%1)").arg(sentence(info.error())));
            return;
        }
        if (!info->auditForwarding) {
            forwarding_->setText(tr("Forwarding: off. No SIEM receives the entries as they "
                                    "are written (sealtrain-control --audit-forward)."));
            return;
        }
        const api::AuditForwardingView& f = *info->auditForwarding;
        QString text = tr("Forwarding to %1: %2 of %3 entries delivered (%4 behind), signed "
                          "head of %5")
                           .arg(QString::fromStdString(f.kind))
                           .arg(f.delivered)
                           .arg(f.logSize)
                           .arg(f.lag())
                           .arg(f.headSize);
        if (f.lastDeliveryUnix != 0)
            text += tr("; last delivery %1")
                        .arg(QDateTime::fromSecsSinceEpoch(f.lastDeliveryUnix)
                                 .toUTC()
                                 .toString(Qt::ISODate));
        if (f.failingSinceUnix != 0)
            text += tr(". The target refuses lines since %1 (%2 failures); nothing is lost, "
                       "the entries wait in the signed log.")
                        .arg(QDateTime::fromSecsSinceEpoch(f.failingSinceUnix)
                                 .toUTC()
                                 .toString(Qt::ISODate))
                        .arg(f.failures);
        forwarding_->setText(text);
    });
}

void AuditPage::loadMore()
{
    auto client = session_.client();
    if (loading_ || exhausted_ || !client)
        return;
    loading_ = true;
    api::AuditQueryOptions options;
    options.selection.actor = actor_->text().trimmed().toStdString();
    options.selection.action = action_->text().trimmed().toStdString();
    options.outcome = outcome_->currentData().toString().toStdString();
    options.cursor = cursor_;
    options.limit = kPage;
    const int generation = generation_;
    status_->setText(tr("Loading…"));
    runInBackground(
        this, [client, options] { return client->audit().queryAudit(options); },
        [this, generation](Result<api::AuditPageView> page) {
            if (generation != generation_)
                return;  // the filter changed meanwhile
            loading_ = false;
            if (!page) {
                status_->setText(sentence(page.error()));
                if (page.error().code() == ErrorCode::Unauthenticated)
                    session_.lose(sentence(page.error()));
                return;
            }
            cursor_ = page->nextCursor;
            exhausted_ = cursor_ == 0;
            const bool first = model_->rowCount() == 0;
            model_->appendRows(std::move(page->entries));
            if (first)
                table_->resizeColumnsToContents();  // once: measuring every row would stall
            status_->setText(tr("%1 entries shown of %2 in the log%3")
                                 .arg(model_->rowCount())
                                 .arg(page->logSize)
                                 .arg(exhausted_ ? QString() : tr("; scroll for more")));
            // A short page with more to come (a filter that matches little): go on.
            if (!exhausted_ && table_->verticalScrollBar()->maximum() == 0)
                loadMore();
        });
}

void AuditPage::verifyLive()
{
    auto client = session_.client();
    if (!client)
        return;
    verdict_->setText(tr("Verifying…"));
    verify_->setEnabled(false);
    runInBackground(
        this, [client] { return client->audit().verifyAuditLog(); },
        [this](const Result<api::LogVerificationView>& checked) {
            verify_->setEnabled(true);
            if (!checked) {
                verdict_->setText(sentence(checked.error()));
                return;
            }
            verdict_->setText(
                checked->ok
                    ? tr("VERIFIED: %1 entries and %2 signed heads; newest head at %3 entries, "
                         "root %4; key %5")
                          .arg(checked->entries)
                          .arg(checked->heads)
                          .arg(checked->newestHeadSize)
                          .arg(QString::fromStdString(checked->newestHeadRoot.substr(0, 16)),
                               QString::fromStdString(checked->keyId))
                    : tr("FAILED: %1").arg(QString::fromStdString(checked->error)));
        });
}

void AuditPage::exportBundle()
{
    auto client = session_.client();
    QString path = exportPath_->text().trimmed();
    if (path.isEmpty())
        path = QFileDialog::getSaveFileName(this, tr("Save the audit bundle"), "audit.bundle");
    if (path.isEmpty() || !client)
        return;
    exportPath_->setText(path);
    api::AuditSelection selection;
    selection.actor = actor_->text().trimmed().toStdString();
    selection.action = action_->text().trimmed().toStdString();
    status_->setText(tr("Exporting…"));
    export_->setEnabled(false);
    runInBackground(
        this,
        [client, selection, target = std::filesystem::path(path.toStdString()),
         withReport = withReport_->isChecked()]() -> Result<ExportedAudit> {
            auto exported = client->audit().exportAudit(selection);
            if (!exported)
                return exported.error();
            const std::string& bundle = exported->bundle;
            SEALTRAIN_TRY(writeFileAtomically(
                target, {reinterpret_cast<const std::uint8_t*>(bundle.data()), bundle.size()},
                AtomicFileSink::Overwrite::Allow, 0644U));
            ExportedAudit done{exported->warning.value_or(""), {}, {}};
            if (!withReport)
                return done;
            // The report says what a reviewer's own check of the bundle says: verified against
            // the key the control plane publishes, every entry kept for the table.
            auto keys = client->platform().signingKeys();
            if (!keys)
                return keys.error();
            audit::VerifyOptions options;
            options.trustedKey = keys->auditPem;
            options.keepEntries = true;
            const audit::VerifyReport verified = audit::verifyBundle(bundle, options);
            report::ReportSource source;
            source.bundle = target;
            source.bundleSha256 = toHex(crypto::sha256(
                {reinterpret_cast<const std::uint8_t*>(bundle.data()), bundle.size()}));
            source.repeatCommand =
                report::repeatVerifyCommand(target.filename().string(), verified.keyId, "");
            source.creator = "sealtrain";
            auto pdf = report::renderPdfReport(verified, source);
            if (!pdf)
                return pdf.error();
            done.report = std::filesystem::path(target).replace_extension(".pdf");
            // Private: it names users and data.
            SEALTRAIN_TRY(writeFileAtomically(
                done.report,
                {reinterpret_cast<const std::uint8_t*>(pdf->constData()), std::size_t(pdf->size())},
                AtomicFileSink::Overwrite::Allow, 0600U));
            done.verdict = audit::verdictName(verified.verdict());
            return done;
        },
        [this, path](const Result<ExportedAudit>& exported) {
            export_->setEnabled(true);
            if (!exported) {
                status_->setText(sentence(exported.error()));
                return;
            }
            QString text = tr("Bundle saved to %1.").arg(path);
            if (!exported->report.empty())
                text += " "
                        + tr("Its report (%1) saved to %2.")
                              .arg(QString::fromStdString(exported->verdict),
                                   QString::fromStdString(exported->report.string()));
            if (!exported->warning.empty())
                text += " " + QString::fromStdString(exported->warning);
            status_->setText(text);
        });
}

QString AuditPage::verifyBundleFile(const QString& path, const std::string& trustedKeyPem)
{
    auto text = readWholeFile(std::filesystem::path(path.toStdString()));
    if (!text)
        return sentence(text.error());
    audit::VerifyOptions options;
    options.trustedKey = trustedKeyPem;
    options.keepEntries = false;
    const audit::VerifyReport report = audit::verifyBundle(*text, options);
    QString line = QString("%1: %2 of %3 entries verified; %4")
                       .arg(audit::verdictName(report.verdict()))
                       .arg(report.entriesVerified)
                       .arg(report.entriesInBundle)
                       .arg(QString::fromStdString(report.selectionText()));
    if (!report.errors.empty())
        line += " " + QString::fromStdString(report.errors.front());
    for (const std::string& warning : report.warnings)
        line += " " + QString::fromStdString(warning);
    return line;
}

}  // namespace sealtrain::gui
