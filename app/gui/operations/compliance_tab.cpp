// The compliance report on the Operations screen (compliance_tab.h).
#include "compliance_tab.h"

#include "common/colors.h"

#include "audit/audit_table_model.h"
#include "common/background.h"
#include "common/path_field.h"
#include "session/session.h"

#include "compliance_report.h"

#include <QBrush>
#include <QCheckBox>
#include <QColor>
#include <QDate>
#include <QDateEdit>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <filesystem>

namespace sealtrain::gui {

ComplianceTableModel::ComplianceTableModel(QObject* parent)
    : RowModel({tr("Framework"), tr("Control"), tr("Verdict"), tr("Cited entries"), tr("Title")},
               parent)
{
}

QVariant ComplianceTableModel::cell(const api::ComplianceControlView& control, int column,
                                    int role) const
{
    if (role == Qt::ForegroundRole && column == Verdict)
        return QBrush(toneColor(control.verdict == "passed" ? Tone::Good : Tone::Bad));
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Framework: return QString::fromStdString(control.framework);
    case Control: return QString::fromStdString(control.id);
    case Verdict: return QString::fromStdString(report::verdictHeading(control.verdict));
    case Cited: return static_cast<qulonglong>(report::citedBy(control).size());
    case Title: return QString::fromStdString(control.title);
    default: return {};
    }
}

namespace {

// Midnight UTC of `date`, as the period's end (`sealtrainctl compliance report --from DATE`).
std::int64_t midnightUtc(const QDate& date)
{
    return date.startOfDay(Qt::UTC).toSecsSinceEpoch();
}

}  // namespace

ComplianceTab::ComplianceTab(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , fromOn_(new QCheckBox(tr("F&rom"), this))
    , from_(new QDateEdit(QDate::currentDate().addMonths(-3), this))
    , toOn_(new QCheckBox(tr("Befor&e"), this))
    , to_(new QDateEdit(QDate::currentDate().addDays(1), this))
    , pdf_(namedField(this, "compliancePdfPath", tr("The PDF report to write"),
                      tr("the PDF to write; the evidence bundle goes beside it (.bundle)")))
    , json_(new QCheckBox(tr("Also &JSON for programs"), this))
    , make_(new QPushButton(tr("&Make the report"), this))
    , summary_(new QLabel(this))
    , controls_(new ComplianceTableModel(this))
    , table_(new QTableView(this))
    , citedModel_(new AuditTableModel(this))
    , citedTable_(new QTableView(this))
{
    setObjectName("complianceTab");
    fromOn_->setObjectName("complianceFromOn");
    from_->setObjectName("complianceFrom");
    from_->setAccessibleName(tr("Period from (UTC)"));
    toOn_->setObjectName("complianceToOn");
    to_->setObjectName("complianceTo");
    to_->setAccessibleName(tr("Period before (UTC)"));
    for (QDateEdit* date : {from_, to_}) {
        date->setCalendarPopup(true);
        date->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
        date->setEnabled(false);
    }
    json_->setObjectName("complianceJson");
    make_->setObjectName("complianceMakeButton");
    summary_->setObjectName("complianceSummary");
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setUpTable(*table_, *controls_, "complianceTable", tr("Controls and verdicts"));
    setUpTable(*citedTable_, *citedModel_, "complianceCitedTable",
               tr("The audit entries the chosen control cites"));

    auto* period = new QHBoxLayout;
    period->addWidget(new QLabel(tr("Period (UTC):"), this));
    period->addWidget(fromOn_);
    period->addWidget(from_);
    period->addWidget(toOn_);
    period->addWidget(to_);
    period->addStretch(1);
    auto* out = new QHBoxLayout;
    out->addWidget(withBrowse(pdf_, PathKind::SaveFile, tr("Save the compliance report")), 1);
    out->addWidget(json_);
    out->addWidget(make_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(withFilter(*table_));
    split->addWidget(withFilter(*citedTable_));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(period);
    layout->addLayout(out);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);

    connect(fromOn_, &QCheckBox::toggled, from_, &QWidget::setEnabled);
    connect(toOn_, &QCheckBox::toggled, to_, &QWidget::setEnabled);
    connect(make_, &QPushButton::clicked, this, &ComplianceTab::make);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ComplianceTab::showCited);
}

bool ComplianceTab::allowedFor(const Session& session)
{
    return session.holds("audit.read") && session.holds("audit.export");
}

void ComplianceTab::clear()
{
    pdf_->clear();
    summary_->clear();
    controls_->setRows({});
    citedModel_->setRows({});
    entries_.clear();
}

void ComplianceTab::make()
{
    auto client = session_.client();
    if (!client || busy_)
        return;
    api::CompliancePeriodRequest period;
    if (fromOn_->isChecked())
        period.fromUnixSeconds = midnightUtc(from_->date());
    if (toOn_->isChecked())
        period.toUnixSeconds = midnightUtc(to_->date());
    if (period.fromUnixSeconds && period.toUnixSeconds
        && *period.fromUnixSeconds >= *period.toUnixSeconds) {
        summary_->setText(tr("The period ends before it begins; choose a start before its end."));
        return;
    }
    const QString pdf = pathOrAsk(
        pdf_, PathKind::SaveFile, tr("Save the compliance report"),
        QDir::home().filePath(
            QStringLiteral("compliance-%1.pdf").arg(QDate::currentDate().toString(Qt::ISODate))));
    if (pdf.isEmpty())
        return;
    report::ComplianceOutputs outputs;
    outputs.pdf = pdf.toStdString();
    outputs.bundle = report::defaultBundlePath(outputs.pdf);
    if (json_->isChecked())
        outputs.json = std::filesystem::path(outputs.pdf).replace_extension(".json");
    // Refused before the control plane spends anything on it.
    if (auto free = report::checkComplianceOutputs(outputs); !free) {
        summary_->setText(sentence(free.error()));
        return;
    }
    busy_ = true;
    make_->setEnabled(false);
    summary_->setText(tr("The control plane is judging the controls…"));
    struct Made {
        api::ComplianceReportView report;
        report::ComplianceWritten written;
    };
    runInBackground(
        this,
        [client, period, outputs]() -> Result<Made> {
            auto judged = client->compliance().complianceReport(period);
            if (!judged)
                return judged.error();
            auto written = report::writeComplianceReport(*judged, outputs, "sealtrain desktop");
            if (!written)
                return written.error();
            return Made{std::move(*judged), std::move(*written)};
        },
        [this, outputs](Result<Made> made) {
            busy_ = false;
            make_->setEnabled(true);
            if (!made) {
                summary_->setText(sentence(made.error()));
                return;
            }
            const auto& controls = made->report.controls;
            const auto count = [&controls](const char* verdict) {
                return std::count_if(controls.begin(), controls.end(),
                                     [verdict](const auto& c) { return c.verdict == verdict; });
            };
            QString text = tr("Period: %1. %2 of %3 controls passed, %4 failed, %5 without "
                              "evidence. "
                              "Wrote %6 and its evidence bundle %7 (%8 cited entries); a "
                              "reviewer checks it with `sealtrainctl audit verify %7 --key "
                              "signing.pub.pem`.")
                               .arg(QString::fromStdString(made->report.period))
                               .arg(count("passed"))
                               .arg(controls.size())
                               .arg(count("failed"))
                               .arg(count("no evidence"))
                               .arg(QString::fromStdString(outputs.pdf.string()),
                                    QString::fromStdString(outputs.bundle.string()))
                               .arg(made->report.cited.size());
            if (!outputs.json.empty())
                text += QLatin1Char(' ')
                        + tr("Wrote %1 for programs.")
                              .arg(QString::fromStdString(outputs.json.string()));
            summary_->setText(text);
            entries_ = std::move(made->written.cited);
            controls_->setRows(std::move(made->report.controls));
            table_->resizeColumnsToContents();
            citedModel_->setRows({});
            pdf_->clear();
        });
}

void ComplianceTab::showCited()
{
    const api::ComplianceControlView* control = controls_->rowAt(table_->currentIndex().row());
    std::vector<api::AuditEntryView> rows;
    if (control != nullptr) {
        const std::vector<std::uint64_t> wanted = report::citedBy(*control);
        for (const audit::Entry& entry : entries_)
            if (std::binary_search(wanted.begin(), wanted.end(), entry.sequence))
                rows.push_back(entryView(entry));
    }
    citedModel_->setRows(std::move(rows));
    citedTable_->resizeColumnsToContents();
}

}  // namespace sealtrain::gui
